import type { AuthEvent, NotificationKind } from '@relay/contracts'

/** The title each pre-built kind shows unless its caller gives another. */
export const kindTitles = {
  healthReportSent: 'Health report sent',
  healthReportFailed: 'Health report failed',
  userLogin: 'Signed in',
  userLogout: 'Signed out',
  systemUpdate: 'System update',
  systemUpdateAvailable: 'Update available',
  systemUpdateInstalled: 'Update installed',
  apiSuccess: 'Request succeeded',
  apiError: 'Request failed',
  deviceConnected: 'Device connected',
  deviceDisconnected: 'Device disconnected',
  junctionStarted: 'Junction started',
  junctionStopped: 'Junction stopped',
  junctionError: 'Junction error',
  databaseBackupSuccess: 'Backup complete',
  databaseBackupFailure: 'Backup failed',
  backupVerificationFailure: 'Backup verification failed',
  cloudSyncStarted: 'Cloud sync started',
  authenticationFailure: 'Sign-in failed',
  sessionExpired: 'Session expired',
  cloudAuthenticationRequired: 'Cloud sign-in required',
  collectorFailing: 'Collector failing',
  sourceRecovered: 'Recovered',
} as const satisfies Record<NotificationKind, string>

/** POST /auth-event: each event is one kind, with its own expiry. */
export const authEventKinds = {
  login: { kind: 'userLogin', message: (user) => (user ? `${user} signed in` : 'Signed in') },
  logout: { kind: 'userLogout', message: (user) => (user ? `${user} signed out` : 'Signed out') },
  failure: {
    kind: 'authenticationFailure',
    message: (user) => (user ? `Sign-in failed for ${user}` : 'A sign-in attempt failed'),
  },
  'session-expired': { kind: 'sessionExpired', message: () => 'Your session has expired; sign in again' },
  'cloud-auth-required': {
    kind: 'cloudAuthenticationRequired',
    message: () => 'The relay is no longer signed in to the cloud; sign in again to resume cloud backups',
  },
} as const satisfies Record<AuthEvent, { kind: NotificationKind; message: (username?: string) => string }>
