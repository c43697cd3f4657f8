import type { HttpServer } from '@relay/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { emailProblem, passwordProblem } from '../directory/service.js'
import { MailNotSent } from '../mail/index.js'
import { formText, isCrossSite, queryText, sendPage, servePages } from '../pages/forms.js'
import { messagePage } from '../pages/layout.js'
import {
  checkEmailPage,
  confirmEmailChangePage,
  emailChangedPage,
  emailTakenPage,
  emailVerifiedPage,
  forgotPasswordPage,
  linkNotValidPage,
  mailNotSentPage,
  passwordChangedPage,
  resendSent,
  resetPasswordPage,
  resetSent,
  signUpPage,
  signUpSent,
  throttledPage,
  verifyEmailPage,
} from './pages.js'
import { registrationPaths as paths, returnUid } from './paths.js'
import { MailThrottled, newAccountProblems, type RegistrationService } from './service.js'

export type RegistrationRoutesOptions = {
  registration: RegistrationService
  publicUrl: string
  /** Whether the relay sign-in with this interaction id is still waiting, so a page can link back to it. */
  interactionOpen: (uid: string) => Promise<boolean>
}

/** Longest value kept from a form field: a typo in a huge paste is not shown back whole. */
const echoLimit = 255

/**
 * The pages anyone reaches without an account: sign-up, email confirmation, password reset, and the
 * confirmation of an email change. Public to the access-token guard; every post is checked for origin,
 * mail-sending posts are throttled, and a link's token is used only by a post (mail scanners open links).
 */
export async function registrationRoutes(
  app: HttpServer,
  { registration, publicUrl, interactionOpen }: RegistrationRoutesOptions,
) {
  servePages(app)
  const open = { config: { public: true } } as const

  app.addHook('preHandler', async (request, reply) => {
    if (request.method === 'POST' && isCrossSite(request, publicUrl)) {
      return sendPage(
        reply,
        403,
        messagePage('This form came from another site', 'Open the page on this site and send the form from there.'),
      )
    }
  })

  /** Runs a request that sends mail; a throttle or a failed send is answered as a page, nothing else. */
  async function sendingMail(reply: FastifyReply, action: () => Promise<string>) {
    try {
      return sendPage(reply, 200, await action())
    } catch (err) {
      if (err instanceof MailThrottled) {
        return sendPage(reply.headers(err.headers), 429, throttledPage(err.message))
      }
      if (err instanceof MailNotSent) {
        return sendPage(reply, 503, mailNotSentPage())
      }
      throw err
    }
  }

  const isOpen = async (uid: string | undefined) => (uid ? interactionOpen(uid) : false)
  const uidOf = (request: FastifyRequest) => returnUid(queryText(request, 'uid') ?? formText(request.body, 'uid'))

  app.get(paths.signUp, open, async (request, reply) => sendPage(reply, 200, signUpPage({ uid: uidOf(request) })))

  app.post(paths.signUp, open, async (request, reply) => {
    const uid = uidOf(request)
    const form = {
      email: formText(request.body, 'email').trim(),
      name: formText(request.body, 'name'),
      password: formText(request.body, 'password'),
    }
    const problems = newAccountProblems(form)
    if (Object.keys(problems).length > 0) {
      const errors = {
        email: problems.email && `Enter your email address, like name@example.com.`,
        name: problems.name && `Shorten your name to ${echoLimit} characters or fewer.`,
        password: problems.password && `Choose a password of ${problems.password.replace(/^must be /, '')}.`,
      }
      const view = { uid, email: form.email.slice(0, echoLimit), name: form.name.slice(0, echoLimit), errors }
      return sendPage(reply, 400, signUpPage(view))
    }
    return sendingMail(reply, async () => {
      await registration.signUp(form, { ip: request.ip, uid })
      return checkEmailPage(form.email, signUpSent)
    })
  })

  app.post(paths.resendVerification, open, async (request, reply) => {
    const email = formText(request.body, 'email').trim()
    if (emailProblem(email)) {
      return sendPage(
        reply,
        400,
        messagePage('No email address', 'Go back to signing in and enter your email address.'),
      )
    }
    return sendingMail(reply, async () => {
      await registration.resendVerification(email, { ip: request.ip, uid: uidOf(request) })
      return checkEmailPage(email, resendSent)
    })
  })

  app.get(paths.verifyEmail, open, async (request, reply) => {
    const token = queryText(request, 'token') ?? ''
    if (!(await registration.checkLink('verify-email', token))) {
      return sendPage(reply, 400, linkNotValidPage('verify'))
    }
    return sendPage(reply, 200, verifyEmailPage(token, uidOf(request)))
  })

  app.post(paths.verifyEmail, open, async (request, reply) => {
    const uid = uidOf(request)
    const verified = await registration.verifyEmail(formText(request.body, 'token'))
    if (!verified) {
      return sendPage(reply, 400, linkNotValidPage('verify'))
    }
    return sendPage(reply, 200, emailVerifiedPage(verified.email, uid, await isOpen(uid)))
  })

  app.get(paths.forgotPassword, open, async (request, reply) =>
    sendPage(reply, 200, forgotPasswordPage({ uid: uidOf(request) })),
  )

  app.post(paths.forgotPassword, open, async (request, reply) => {
    const uid = uidOf(request)
    const email = formText(request.body, 'email').trim()
    if (emailProblem(email)) {
      const error = 'Enter the email address of your account, like name@example.com.'
      return sendPage(reply, 400, forgotPasswordPage({ uid, email: email.slice(0, echoLimit), error }))
    }
    return sendingMail(reply, async () => {
      await registration.requestPasswordReset(email, { ip: request.ip, uid })
      return checkEmailPage(email, resetSent)
    })
  })

  app.get(paths.resetPassword, open, async (request, reply) => {
    const uid = uidOf(request)
    const token = queryText(request, 'token') ?? ''
    if (!(await registration.checkLink('reset-password', token))) {
      return sendPage(reply, 400, linkNotValidPage('reset', uid))
    }
    return sendPage(reply, 200, resetPasswordPage({ token, uid }))
  })

  app.post(paths.resetPassword, open, async (request, reply) => {
    const uid = uidOf(request)
    const token = formText(request.body, 'token')
    const password = formText(request.body, 'password')
    const confirm = formText(request.body, 'confirm')
    if (!(await registration.checkLink('reset-password', token))) {
      return sendPage(reply, 400, linkNotValidPage('reset', uid))
    }
    const problem = passwordProblem(password)
    if (problem || password !== confirm) {
      const errors = problem
        ? { password: `Choose a password of ${problem.replace(/^must be /, '')}.` }
        : { confirm: 'The two passwords are not the same. Type the new password twice.' }
      return sendPage(reply, 400, resetPasswordPage({ token, uid, errors }))
    }
    if (!(await registration.resetPassword(token, password))) {
      return sendPage(reply, 400, linkNotValidPage('reset', uid))
    }
    return sendPage(reply, 200, passwordChangedPage(uid, await isOpen(uid)))
  })

  app.get(paths.confirmEmailChange, open, async (request, reply) => {
    const token = queryText(request, 'token') ?? ''
    const pending = await registration.checkLink('change-email', token)
    if (!pending?.newEmail) {
      return sendPage(reply, 400, linkNotValidPage('change'))
    }
    return sendPage(reply, 200, confirmEmailChangePage(token, pending.newEmail))
  })

  app.post(paths.confirmEmailChange, open, async (request, reply) => {
    const outcome = await registration.confirmEmailChange(formText(request.body, 'token'))
    if (!outcome) {
      return sendPage(reply, 400, linkNotValidPage('change'))
    }
    if (outcome.status === 'taken') {
      return sendPage(reply, 409, emailTakenPage(outcome.email))
    }
    return sendPage(reply, 200, emailChangedPage(outcome.email))
  })
}
