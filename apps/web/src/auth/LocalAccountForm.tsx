import { localAuthLimits } from '@relay/contracts'
import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { api } from '../api'
import common from '../ui/common.module.css'
import { FormAlert } from '../ui/FormAlert'
import styles from './AuthForm.module.css'
import {
  type AccountDraft,
  type AccountErrors,
  type AccountField,
  accountErrorsOf,
  checkNewAccount,
  noAccountErrors,
} from './local-account'
import { TextField } from './TextField'
import { useRefreshAuthStatus } from './use-auth-status'

const emptyDraft: AccountDraft = { username: '', password: '', confirm: '' }

/** Creates the relay's first local account; the relay then signs this browser in and switches to local accounts. */
export function LocalAccountForm({ submitLabel }: { submitLabel: string }) {
  const refreshStatus = useRefreshAuthStatus()
  const [draft, setDraft] = useState(emptyDraft)
  const [errors, setErrors] = useState<AccountErrors>(noAccountErrors)
  const create = useMutation({
    mutationFn: () => api.setUpLocalAccount({ username: draft.username, password: draft.password }),
    onSuccess: () => refreshStatus(),
    onError: (error) => setErrors(accountErrorsOf(error)),
  })

  const edit = (field: AccountField, value: string) => {
    setDraft((previous) => ({ ...previous, [field]: value }))
    setErrors((previous) => ({ fields: { ...previous.fields, [field]: undefined }, form: [] }))
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const fields = checkNewAccount(draft)
    if (Object.keys(fields).length > 0) {
      setErrors({ fields, form: [] })
      return
    }
    setErrors(noAccountErrors)
    create.mutate()
  }

  return (
    <form className={styles.form} noValidate onSubmit={submit} aria-label="Create a local account">
      <TextField
        label="Username"
        name="username"
        autoComplete="username"
        value={draft.username}
        error={errors.fields.username}
        onChange={(value) => edit('username', value)}
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        hint={`At least ${localAuthLimits.passwordMinLength} characters.`}
        value={draft.password}
        error={errors.fields.password}
        onChange={(value) => edit('password', value)}
      />
      <TextField
        label="Confirm password"
        name="confirm"
        type="password"
        autoComplete="new-password"
        value={draft.confirm}
        error={errors.fields.confirm}
        onChange={(value) => edit('confirm', value)}
      />
      <FormAlert title="The account was not created" messages={errors.form} />
      <div className={common.actions}>
        <button type="submit" className={common.primary} disabled={create.isPending}>
          {create.isPending ? 'Creating…' : submitLabel}
        </button>
      </div>
    </form>
  )
}
