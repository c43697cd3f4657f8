import type { AuthMode, SessionUser } from '@relay/contracts'

export const modeDescriptions = {
  none: 'Anyone who can open this page can use the relay. Suits a relay that only this computer can reach.',
  local: 'People sign in with a username and password kept in this relay.',
  cloud: 'People sign in with their Relay Cloud account, and the relay connects to the cloud for backups.',
} as const satisfies Record<AuthMode, string>

export const userKindLabels = {
  local: 'Local account',
  cloud: 'Relay Cloud account',
} as const satisfies Record<SessionUser['kind'], string>
