/** Where the registration pages live; the relay sign-in page links to some of them. */
export const registrationPaths = {
  signUp: '/sign-up',
  resendVerification: '/sign-up/resend',
  verifyEmail: '/verify-email',
  forgotPassword: '/forgot-password',
  resetPassword: '/reset-password',
  confirmEmailChange: '/confirm-email',
} as const

/** oidc-provider's interaction ids are short url-safe strings; anything else is not one. */
const uidPattern = /^[\w-]{1,64}$/

/** The relay sign-in (interaction id) a page was reached from, when the value can be one. */
export function returnUid(value: unknown): string | undefined {
  return typeof value === 'string' && uidPattern.test(value) ? value : undefined
}

/** `path` with the query `params`, and `uid` when there is one: the relay sign-in to go back to. */
export function withReturn(path: string, uid: string | undefined, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params)
  if (uid) {
    query.set('uid', uid)
  }
  const search = query.toString()
  return search ? `${path}?${search}` : path
}
