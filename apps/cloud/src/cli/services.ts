import { AppError } from '@relay/contracts'
import type { Account } from '../directory/directory.js'
import { isUuid } from '../directory/service.js'
import { closeRedis, connectRedis } from '../redis.js'
import { type CloudServices, createCloudServices } from '../services.js'
import type { CliContext } from './command.js'

/**
 * The app's own services on the command's database, so a change here invalidates license caches
 * exactly as a webhook does: the shared Redis key, and other processes through NOTIFY.
 */
export async function withServices<T>(context: CliContext, work: (services: CloudServices) => Promise<T>): Promise<T> {
  const { config } = context
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined
  try {
    const services = createCloudServices({ config, database: await context.database(), redis })
    try {
      return await work(services)
    } finally {
      await services.close()
    }
  } finally {
    if (redis) {
      await closeRedis(redis)
    }
  }
}

export async function findUser({ directory }: CloudServices, ref: string): Promise<Account> {
  const user = isUuid(ref) ? await directory.find(ref) : await directory.findByEmail(ref)
  if (!user) {
    throw new AppError('NOT_FOUND', `no user ${ref}`)
  }
  return user
}
