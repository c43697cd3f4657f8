import type { SignInThrottle } from '@relay/server-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { CloudConfig } from '../config.js'
import type { CloudDB } from '../db/schema.js'
import { registrationPaths } from '../registration/paths.js'
import type { CloudServices } from '../services.js'
import type { AccountPageRoutesOptions } from './routes.js'
import { createAccountPageService } from './service.js'

export { accountPageRoutes } from './routes.js'

/** The command that grants a license where billing is not configured, as the page names it. */
export const giftCommand = 'npm run cloud -- users gift'

export type AccountPageDeps = {
  config: Pick<CloudConfig, 'publicUrl'>
  services: CloudServices
  db: Kysely<CloudDB>
  /** The relay sign-in's throttle: both pages count failed passwords in the same buckets. */
  throttle: SignInThrottle
  log: FastifyBaseLogger
}

/** The account page's routes options, built from the cloud's services. */
export function createAccountPage({ config, services, db, throttle, log }: AccountPageDeps): AccountPageRoutesOptions {
  const sessions = services.browserSessions
  const service = createAccountPageService({
    db,
    clock: services.clock,
    log: log.child({ feature: 'account-page' }),
    directory: services.directory,
    account: services.account,
    registration: services.registration,
    billing: services.payments.billing,
    licenses: services.licenses,
    backups: services.backups,
    browserSessions: sessions,
    throttle,
  })
  return {
    service,
    sessions,
    directory: services.directory,
    publicUrl: config.publicUrl,
    links: { signUp: registrationPaths.signUp, forgotPassword: registrationPaths.forgotPassword },
    giftCommand,
  }
}
