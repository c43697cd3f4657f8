import { subscriptionStatuses } from '../licenses/service.js'
import { type CliValues, type Command, required, UsageError } from './command.js'
import { findUser, withServices } from './services.js'

function userArgument(positionals: string[]): string {
  const [ref, ...rest] = positionals
  if (!ref || rest.length > 0) {
    throw new UsageError('name one user, by email address or id')
  }
  return ref
}

function optional(values: CliValues, name: string, maxLength: number): string | undefined {
  const value = values[name]
  if (value === undefined) {
    return undefined
  }
  if (typeof value !== 'string' || value.trim() === '' || value.length > maxLength) {
    throw new UsageError(`--${name} must be 1 to ${maxLength} characters`)
  }
  return value
}

function giftCommand(gifted: boolean): Command {
  const name = gifted ? 'gift' : 'ungift'
  return {
    name: `users ${name}`,
    usage: `users ${name} <email|id>`,
    help: gifted ? 'give a user a license without a subscription' : 'take a gifted license back',
    async run(context, _values, positionals) {
      const ref = userArgument(positionals)
      await withServices(context, async (services) => {
        const user = await findUser(services, ref)
        await services.licenses.setGifted(user.id, gifted)
        context.out(`${user.email}: ${gifted ? 'license gifted' : 'gifted license removed'}`)
      })
    },
  }
}

export const accountCommands: Command[] = [
  {
    name: 'users add',
    usage: 'users add --email E --password P [--name N]',
    help: 'create an account; prints its id',
    options: { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' } },
    async run(context, values) {
      const email = required(values, 'email')
      const password = required(values, 'password')
      const name = optional(values, 'name', 255)
      await withServices(context, async ({ directory }) => {
        const user = await directory.create({ email, password, name })
        context.out(user.id)
      })
    },
  },
  {
    name: 'users list',
    usage: 'users list',
    help: 'list accounts with their license',
    async run(context) {
      await withServices(context, async ({ directory, licenses }) => {
        context.out(['id', 'email', 'name', 'license'].join('\t'))
        for (const user of await directory.list()) {
          const license = await licenses.check(user.id)
          context.out([user.id, user.email, user.name, license.source ?? 'none'].join('\t'))
        }
      })
    },
  },
  giftCommand(true),
  giftCommand(false),
  {
    name: 'subscriptions set',
    usage:
      'subscriptions set <email|id> --status S [--provider P] [--customer C] [--subscription ID] [--period-end ISO]',
    help: "set a user's subscription status (only active grants a license)",
    options: {
      status: { type: 'string' },
      provider: { type: 'string', default: 'stripe' },
      customer: { type: 'string' },
      subscription: { type: 'string' },
      'period-end': { type: 'string' },
    },
    async run(context, values, positionals) {
      const ref = userArgument(positionals)
      const status = required(values, 'status')
      if (!(subscriptionStatuses as readonly string[]).includes(status)) {
        throw new UsageError(`--status must be one of ${subscriptionStatuses.join(', ')}`)
      }
      const provider = optional(values, 'provider', 32) ?? 'stripe'
      const periodEndText = optional(values, 'period-end', 64)
      const currentPeriodEnd = periodEndText === undefined ? null : new Date(periodEndText)
      if (currentPeriodEnd && Number.isNaN(currentPeriodEnd.getTime())) {
        throw new UsageError('--period-end must be an ISO 8601 date')
      }
      const subscription = optional(values, 'subscription', 255)
      const customer = optional(values, 'customer', 255)
      await withServices(context, async (services) => {
        const user = await findUser(services, ref)
        // Without ids, one manual subscription per user and provider: setting it again updates it.
        const subscriptionId = subscription ?? `manual-${user.id}`
        const customerId = customer ?? `manual-${user.id}`
        await services.licenses.upsertSubscription({
          userId: user.id,
          provider,
          customerId,
          subscriptionId,
          status,
          currentPeriodEnd,
        })
        context.out(`${user.email}: ${provider} subscription ${subscriptionId} is ${status}`)
      })
    },
  },
]
