import {
  type FeatureFlags,
  type Notification,
  type NotificationCategory,
  notificationCategories,
  notificationTypes,
} from '@relay/contracts'

/** How long a toast stays: its own duration, else its type's duration flag, else the type's default. */
export function displayDuration(notification: Pick<Notification, 'type' | 'duration'>, flags: FeatureFlags): number {
  if (notification.duration !== null) {
    return notification.duration
  }
  switch (notification.type) {
    case 'success':
      return flags.notifications_duration_success
    case 'error':
      return flags.notifications_duration_error
    case 'warning':
    case 'info':
      return notificationTypes[notification.type].defaultDuration
    default: {
      const unknownType: never = notification.type
      throw new Error(`Unknown notification type ${String(unknownType)}`)
    }
  }
}

export function isCategoryShown(category: NotificationCategory, flags: FeatureFlags): boolean {
  return flags[notificationCategories[category]]
}
