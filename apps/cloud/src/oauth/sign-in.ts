import { MINUTE } from '@relay/contracts'
import { type HttpServer, type SignInLimits, type SignInThrottle, SignInThrottled } from '@relay/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { errors, type InteractionResults } from 'oidc-provider'
import type { IdentityDirectory } from '../directory/directory.js'
import { sendPage, servePages } from '../pages/forms.js'
import { messagePage } from '../pages/layout.js'
import { signInPage } from './pages.js'
import { grantFirstParty } from './provider.js'
import type { OAuthServer } from './server.js'

/** Failed sign-ins allowed before the account or the address has to wait (token buckets). */
export const signInLimits = {
  account: { capacity: 5, refillEvery: 15 * MINUTE },
  address: { capacity: 20, refillEvery: 15 * MINUTE },
} as const satisfies SignInLimits

export type SignInDeps = { oauth: OAuthServer; directory: IdentityDirectory; throttle: SignInThrottle }

const expired = messagePage(
  'This sign-in has expired',
  'Sign-in links are valid for 30 minutes. Go back to your relay and choose "Sign in with cloud" again.',
)

/**
 * The cloud's own sign-in page for the authorization server's interactions: email and password
 * against the directory, throttled per account and per address. Relays are first-party, so
 * consent is granted without a prompt.
 */
export async function signInRoutes(app: HttpServer, { oauth, directory, throttle }: SignInDeps) {
  servePages(app)

  async function details(request: FastifyRequest, reply: FastifyReply) {
    const provider = await oauth.provider()
    try {
      return { provider, interaction: await provider.interactionDetails(request.raw, reply.raw) }
    } catch (err) {
      if (err instanceof errors.SessionNotFound || err instanceof errors.InvalidRequest) {
        return { provider, interaction: undefined }
      }
      throw err
    }
  }

  async function finish(request: FastifyRequest, reply: FastifyReply, result: InteractionResults) {
    const provider = await oauth.provider()
    const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: false })
    return reply.redirect(to, 303)
  }

  // Public: whoever signs in has no token yet; the interaction cookie ties each page to its sign-in.
  const open = { config: { public: true } } as const

  app.get<{ Params: { uid: string } }>('/interaction/:uid', open, async (request, reply) => {
    const { provider, interaction } = await details(request, reply)
    if (!interaction) {
      return sendPage(reply, 400, expired)
    }
    const clientId = String(interaction.params.client_id)
    if (interaction.prompt.name === 'login') {
      const client = await provider.Client.find(clientId)
      return sendPage(reply, 200, signInPage({ uid: interaction.uid, clientName: client?.clientName ?? clientId }))
    }
    // Already signed in here: the first-party client gets a fresh grant of its own, no consent screen.
    const accountId = interaction.session?.accountId
    if (interaction.prompt.name === 'consent' && accountId) {
      const grantId = await grantFirstParty(provider, accountId, clientId, oauth.audience)
      return finish(request, reply, { consent: { grantId } })
    }
    return sendPage(
      reply,
      400,
      messagePage('Sign-in failed', 'This sign-in cannot continue. Start again from your relay.'),
    )
  })

  app.post<{ Params: { uid: string }; Body: Record<string, string> }>(
    '/interaction/:uid/login',
    open,
    async (request, reply) => {
      const { provider, interaction } = await details(request, reply)
      if (interaction?.prompt.name !== 'login') {
        return sendPage(reply, 400, expired)
      }
      const clientId = String(interaction.params.client_id)
      const clientName = (await provider.Client.find(clientId))?.clientName ?? clientId
      const email = typeof request.body?.email === 'string' ? request.body.email.trim().slice(0, 255) : ''
      const password = typeof request.body?.password === 'string' ? request.body.password : ''
      const view = { uid: interaction.uid, clientName, email }
      if (!email || !password) {
        return sendPage(reply, 400, signInPage({ ...view, error: 'Enter your email and password.' }))
      }

      let attempt: Awaited<ReturnType<SignInThrottle['attempt']>>
      try {
        attempt = await throttle.attempt(email, request.ip)
      } catch (err) {
        if (!(err instanceof SignInThrottled)) {
          throw err
        }
        // Rendered here with the form filled in, rather than as the error handler's plain page.
        const { minutes } = err
        request.log.warn({ email }, 'sign-in throttled')
        reply.headers(err.headers)
        return sendPage(
          reply,
          429,
          signInPage({
            ...view,
            error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
          }),
        )
      }

      const account = await directory.authenticate(email, password)
      if (!account) {
        request.log.info({ email }, 'sign-in refused')
        return sendPage(reply, 401, signInPage({ ...view, error: 'The email or password is not correct.' }))
      }
      await attempt.succeeded()
      if (!account.emailVerified) {
        request.log.info({ email }, 'sign-in refused: address not confirmed')
        return sendPage(reply, 403, signInPage({ ...view, unverified: true }))
      }
      const grantId = await grantFirstParty(provider, account.id, clientId, oauth.audience)
      return finish(request, reply, { login: { accountId: account.id }, consent: { grantId } })
    },
  )

  app.post<{ Params: { uid: string } }>('/interaction/:uid/abort', open, async (request, reply) => {
    const { interaction } = await details(request, reply)
    if (!interaction) {
      return sendPage(reply, 400, expired)
    }
    return finish(request, reply, { error: 'access_denied', error_description: 'The user cancelled signing in' })
  })
}

/** Whether the relay sign-in with this interaction id is still waiting, so another page can link back to it. */
export async function isInteractionOpen(oauth: OAuthServer, uid: string): Promise<boolean> {
  const provider = await oauth.provider()
  return (await provider.Interaction.find(uid)) !== undefined
}
