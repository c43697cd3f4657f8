import type { Collector } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { toast } from 'sonner'
import { api } from '../api'
import common from '../ui/common.module.css'
import { InputField } from '../ui/Field'
import { formErrorsOf } from './form-errors'
import { useRefreshSources } from './queries'
import styles from './SourcesPage.module.css'

/** The password that unlocks a collector's protected access token until the relay restarts. */
export function UnlockForm({ collector, onDone }: { collector: Collector; onDone: () => void }) {
  const refresh = useRefreshSources()
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string>()
  const unlock = useMutation({
    mutationFn: () => api.unlockCollector(collector.id, password),
    onSuccess: async () => {
      toast.success(`Unlocked ${collector.name}`)
      await refresh()
      onDone()
    },
    onError: (failure) => {
      const { fields, form } = formErrorsOf(failure, ['password'])
      setError(fields.password ?? form[0] ?? failure.message)
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setError(undefined)
    unlock.mutate()
  }
  return (
    <form className={styles.inlineForm} noValidate onSubmit={submit} aria-label={`Unlock ${collector.name}`}>
      <InputField
        label="Password"
        hint="The password that protects this collector's access token."
        error={error}
        className={styles.inlineField}
        type="password"
        autoComplete="current-password"
        value={password}
        // The form opens on a click that asks for it.
        autoFocus
        onChange={setPassword}
      />
      <button type="submit" className={common.primary} disabled={unlock.isPending || password === ''}>
        {unlock.isPending ? 'Unlocking…' : 'Unlock'}
      </button>
    </form>
  )
}
