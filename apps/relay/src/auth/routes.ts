import {
  AppError,
  authTimings,
  type CloudLoginOutcome,
  unifiedAuthRoutes as routes,
  sameOriginPath,
  sessionCookieName,
} from '@relay/contracts'
import type { HttpServer } from '@relay/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type CloudConnectionService, loginLifetime } from '../cloud-client/connection.js'
import { cloudErrorSentence, describeCloudError } from '../cloud-client/oauth.js'
import { hostnameOf, isLoopbackHost } from './host.js'
import type { AuthService } from './service.js'

/** Binds a started cloud sign-in to the browser that started it; only the callback path gets it. */
const loginCookieName = 'relay_cloud_login'

export type AuthRoutesOptions = { auth: AuthService; cloud: CloudConnectionService }

export async function authRoutes(app: HttpServer, { auth, cloud }: AuthRoutesOptions) {
  const setSessionCookie = (request: FastifyRequest, reply: FastifyReply, token: string) =>
    reply.setCookie(sessionCookieName, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: request.protocol === 'https',
      maxAge: authTimings.frontendSession / 1000,
    })

  app.route({ ...routes.status, config: { public: true }, handler: (request) => auth.status(request.auth) })

  app.route({
    ...routes.setMode,
    handler: async (request) => {
      await auth.setMode(request.body.mode)
      return { success: true as const, mode: request.body.mode }
    },
  })

  app.route({
    ...routes.localSetup,
    handler: async (request, reply) => {
      const { user, token } = await auth.setupLocal(request.body.username, request.body.password)
      setSessionCookie(request, reply, token)
      return reply.code(201).send({ success: true, user })
    },
  })

  app.route({
    ...routes.localLogin,
    config: { public: true },
    handler: async (request, reply) => {
      const { user, token } = await auth.loginLocal(request.body.username, request.body.password, request.ip)
      setSessionCookie(request, reply, token)
      return { success: true as const, user }
    },
  })

  app.route({
    ...routes.logout,
    handler: async (request, reply) => {
      await auth.logout(request.auth)
      reply.clearCookie(sessionCookieName, { path: '/' })
      return { success: true as const }
    },
  })

  app.route({
    ...routes.cloudLogin,
    // In cloud mode this is how a signed-out browser signs in.
    config: { public: 'cloud-mode' },
    handler: async (request, reply) => {
      const returnTo = sameOriginPath(request.query.returnTo ?? '/settings/account')
      if (returnTo === null) {
        throw new AppError('INVALID_REQUEST', 'returnTo must be a path of this relay, such as /settings/account')
      }
      // The cloud accepts loopback redirects only (RFC 8252), on the host the browser already uses,
      // so the relay's cookies come back with the callback.
      if (!isLoopbackHost(hostnameOf(request.host) ?? '')) {
        throw new AppError('INVALID_REQUEST', 'Cloud sign-in works from the relay at 127.0.0.1 or localhost')
      }
      let started: Awaited<ReturnType<CloudConnectionService['startLogin']>>
      try {
        started = await cloud.startLogin({
          redirectUri: `http://${request.host}${routes.cloudCallback.url}`,
          returnTo,
          switchToCloudMode: request.query.mode === 'cloud',
          mayReplaceAccount: auth.mode() === 'none' || request.auth.user !== null,
        })
      } catch (err) {
        request.log.warn({ reason: describeCloudError(err) }, 'cloud sign-in could not start')
        if (wantsHtml(request)) {
          return reply.redirect(withOutcome(returnTo, 'unreachable'))
        }
        throw new AppError('UNAVAILABLE', cloudErrorSentence(err))
      }
      reply.setCookie(loginCookieName, started.loginId, {
        path: routes.cloudCallback.url,
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
        maxAge: loginLifetime / 1000,
      })
      return reply.redirect(started.url.href)
    },
  })

  app.route({
    ...routes.cloudCallback,
    config: { public: true },
    handler: async (request, reply) => {
      const entry = cloud.takeLogin(request.cookies[loginCookieName], request.query.state)
      reply.clearCookie(loginCookieName, { path: routes.cloudCallback.url })
      if (!entry) {
        const message = 'This cloud sign-in is unknown, expired or already finished; start it again from the relay'
        if (wantsHtml(request)) {
          return reply
            .code(400)
            .type('text/html; charset=utf-8')
            .send(expiredPage(message) as never)
        }
        throw new AppError('INVALID_REQUEST', message)
      }
      if (request.query.error) {
        const outcome = request.query.error === 'access_denied' ? 'denied' : 'failed'
        return reply.redirect(withOutcome(entry.returnTo, outcome))
      }
      let outcome: CloudLoginOutcome = 'connected'
      try {
        const search = request.raw.url?.slice(request.raw.url.indexOf('?')) ?? ''
        const result = await cloud.finishLogin(entry, search)
        const token = await auth.cloudSignedIn(result, entry.switchToCloudMode)
        if (token) {
          setSessionCookie(request, reply, token)
        }
      } catch (err) {
        request.log.warn({ reason: describeCloudError(err) }, 'cloud sign-in failed')
        outcome = err instanceof AppError && err.code === 'FORBIDDEN' ? 'other-account' : 'failed'
      }
      return reply.redirect(withOutcome(entry.returnTo, outcome))
    },
  })

  app.route({
    ...routes.cloudLogout,
    handler: async () => {
      await auth.disconnectCloud()
      return { success: true as const }
    },
  })

  app.route({
    ...routes.cloudUserInfo,
    handler: async () => ({ success: true as const, userInfo: await cloud.userInfo() }),
  })

  app.route({
    ...routes.cloudSessions,
    handler: async () => ({ success: true as const, sessions: await cloud.sessions() }),
  })

  app.route({
    ...routes.deleteCloudSession,
    handler: async (request) => {
      await cloud.deleteSession(request.params.id)
      return { success: true as const }
    },
  })

  app.route({ ...routes.forceRefresh, handler: () => auth.forceRefresh() })
}

function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html')
}

/** The page to return to with the outcome added; the UI's home when `returnTo` is not a path of the relay. */
function withOutcome(returnTo: string, outcome: CloudLoginOutcome): string {
  const url = new URL(sameOriginPath(returnTo) ?? '/', 'http://relay.invalid')
  url.searchParams.set('cloud', outcome)
  return `${url.pathname}${url.search}${url.hash}`
}

function expiredPage(message: string): string {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>Cloud sign-in · Relay</title>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">
<h1>Cloud sign-in did not finish</h1><p>${message}</p><p><a href="/settings/account">Back to Relay</a></p></body></html>`
}
