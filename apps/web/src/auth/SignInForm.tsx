import { useMutation } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { api } from '../api'
import common from '../ui/common.module.css'
import { FormAlert } from '../ui/FormAlert'
import styles from './AuthForm.module.css'
import { TextField } from './TextField'
import { useRefreshAuthStatus } from './use-auth-status'

type Missing = { username?: string; password?: string }

/** Signs in with a local account. The relay's own message says why a sign-in failed (wrong password, throttled). */
export function SignInForm() {
  const refreshStatus = useRefreshAuthStatus()
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [missing, setMissing] = useState<Missing>({})
  const signIn = useMutation({
    mutationFn: () => api.signIn({ username, password }),
    onSuccess: () => refreshStatus(),
    onError: () => setPassword(''),
  })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const check: Missing = {
      username: username === '' ? 'Enter your username' : undefined,
      password: password === '' ? 'Enter your password' : undefined,
    }
    setMissing(check)
    if (!check.username && !check.password) {
      signIn.mutate()
    }
  }

  return (
    <form className={styles.form} noValidate onSubmit={submit} aria-label="Sign in">
      <TextField
        label="Username"
        name="username"
        autoComplete="username"
        value={username}
        error={missing.username}
        onChange={(value) => {
          setUsername(value)
          setMissing((previous) => ({ ...previous, username: undefined }))
        }}
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        value={password}
        error={missing.password}
        onChange={(value) => {
          setPassword(value)
          setMissing((previous) => ({ ...previous, password: undefined }))
        }}
      />
      <FormAlert title="Not signed in" messages={signIn.error ? [signIn.error.message] : []} />
      <div className={common.actions}>
        <button type="submit" className={common.primary} disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </div>
    </form>
  )
}
