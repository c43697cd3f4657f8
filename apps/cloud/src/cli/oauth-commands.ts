import { AppError, type TokenType, tokenTypes } from '@relay/contracts'
import { mintAccessToken } from '../auth/tokens.js'
import { listDeviceClients, registerDeviceClient, removeDeviceClient } from '../oauth/clients.js'
import { type Command, required, UsageError } from './command.js'
import { findUser, withServices } from './services.js'

export const oauthCommands: Command[] = [
  {
    name: 'clients add',
    usage: 'clients add --name <name>',
    help: 'register a device client (client credentials); prints its private key once',
    options: { name: { type: 'string' } },
    async run(context, values) {
      const device = await registerDeviceClient((await context.database()).db, required(values, 'name'))
      context.out(`client_id: ${device.clientId}`)
      context.out('private key (JWK, shown only now; the cloud keeps only the public half):')
      context.out(JSON.stringify(device.privateKey))
    },
  },
  {
    name: 'clients list',
    usage: 'clients list',
    help: 'list device clients',
    async run(context) {
      const clients = await listDeviceClients((await context.database()).db)
      context.out(clients.length ? clients.map((c) => `${c.clientId}  ${c.name}`).join('\n') : 'no device clients')
    },
  },
  {
    name: 'clients remove',
    usage: 'clients remove <client_id>',
    help: 'remove a device client; its tokens lapse within 15 minutes',
    async run(context, _values, [clientId]) {
      if (!clientId) {
        throw new UsageError('client_id is required')
      }
      if (!(await removeDeviceClient((await context.database()).db, clientId))) {
        throw new AppError('NOT_FOUND', `no device client ${clientId}`)
      }
      context.out(`removed ${clientId}`)
    },
  },
  {
    name: 'tokens mint',
    usage: 'tokens mint --type user|device (--user <email|id> | --client <client_id>) [--minutes 15]',
    help: 'sign an access token for operators and tests',
    options: {
      type: { type: 'string' },
      user: { type: 'string' },
      client: { type: 'string' },
      minutes: { type: 'string' },
    },
    async run(context, values) {
      const type = required(values, 'type') as TokenType
      if (!tokenTypes.includes(type)) {
        throw new UsageError('--type must be user or device')
      }
      const minutes = Number(values.minutes ?? 15)
      if (!Number.isInteger(minutes) || minutes < 1 || minutes > 24 * 60) {
        throw new UsageError('--minutes must be a whole number from 1 to 1440')
      }
      const { token, expiresAt } = await withServices(context, async (services) => {
        const subject =
          type === 'user' ? (await findUser(services, required(values, 'user'))).id : required(values, 'client')
        return mintAccessToken(services.tokens, { subject, type, lifetimeSeconds: minutes * 60 })
      })
      context.out(token)
      context.out(`expires ${expiresAt.toISOString()}`)
    },
  },
  {
    name: 'keys rotate',
    usage: 'keys rotate',
    help: 'make a new token signing key; the old one verifies for 24 hours more',
    async run(context) {
      const { kid, retiring } = await withServices(context, (services) => services.tokens.keyRing.rotate())
      context.out(`active signing key: ${kid}`)
      if (retiring.length) {
        context.out(`retiring: ${retiring.join(', ')} (still verifying for 24 hours)`)
      }
    },
  },
]
