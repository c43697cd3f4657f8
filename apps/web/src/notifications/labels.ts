import type { NotificationCategory, NotificationType } from '@relay/contracts'

export const typeLabels = {
  success: 'Success',
  error: 'Error',
  warning: 'Warning',
  info: 'Info',
} satisfies Record<NotificationType, string>

export const categoryLabels = {
  api: 'API calls',
  auth: 'Authentication',
  cloud: 'Cloud sync',
  system: 'System',
} satisfies Record<NotificationCategory, string>
