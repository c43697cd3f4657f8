import { type FeatureFlags, type Notification, type NotificationType, notificationTypes } from '@relay/contracts'
import { useCallback, useEffect, useRef, useState } from 'react'
import { type ExternalToast, Toaster, toast } from 'sonner'
import { api } from '../api'
import { useFeatureFlags } from '../feature-flags/use-feature-flags'
import { createAckBatcher } from './ack-batcher'
import styles from './NotificationCenter.module.css'
import { displayDuration, isCategoryShown } from './notification-rules'
import { createToastQueue, receive, release, type ToastQueue, takeShowable } from './toast-queue'

/** Above the largest `notifications_max_concurrent`: the queue decides what is visible, not sonner. */
const sonnerVisibleToasts = 100

const showByType = {
  success: toast.success,
  error: toast.error,
  warning: toast.warning,
  info: toast.info,
} satisfies Record<NotificationType, (message: string, data?: ExternalToast) => string | number>

const colorClasses = {
  green: styles.green,
  red: styles.red,
  orange: styles.orange,
  blue: styles.blue,
} satisfies Record<(typeof notificationTypes)[NotificationType]['color'], string | undefined>

/**
 * Shows the relay's notifications as toasts, in every page. Mounted once, in the app shell.
 *
 * Notifications of a hidden category are acknowledged without being shown: they stay in the
 * history, and the relay does not offer them again on every page load.
 */
export function NotificationCenter() {
  const { data: flags } = useFeatureFlags()
  const { receiveAll, applyFlags } = useToastQueue()
  const cursorRef = useRef<number | undefined>(undefined)

  useEffect(() => {
    applyFlags(flags)
  }, [flags, applyFlags])

  const isPolling = Boolean(flags?.notifications_enabled && flags.notifications_backend_polling)
  const interval = flags?.notifications_polling_interval
  useEffect(() => {
    if (!isPolling || interval === undefined) {
      return
    }
    const controller = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    const poll = async () => {
      try {
        let hasMore = true
        while (hasMore && !controller.signal.aborted) {
          const reply = await api.pendingNotifications(cursorRef.current, controller.signal)
          if (controller.signal.aborted) {
            return
          }
          cursorRef.current = reply.cursor
          receiveAll(reply.notifications)
          hasMore = reply.hasMore
        }
      } catch {
        // The next poll is the retry; the cursor is unchanged, so nothing is missed.
      }
      if (!controller.signal.aborted) {
        timer = setTimeout(poll, interval)
      }
    }
    void poll()
    return () => {
      controller.abort()
      clearTimeout(timer)
    }
  }, [isPolling, interval, receiveAll])

  return (
    <Toaster
      position="bottom-right"
      visibleToasts={sonnerVisibleToasts}
      expand
      richColors
      closeButton
      className={styles.toaster}
      toastOptions={{ closeButtonAriaLabel: 'Dismiss notification', classNames: { toast: styles.toast } }}
    />
  )
}

function useToastQueue() {
  const queueRef = useRef<ToastQueue<Notification>>(createToastQueue())
  const flagsRef = useRef<FeatureFlags | undefined>(undefined)
  const [acks] = useState(() => createAckBatcher({ send: api.acknowledgeNotifications }))

  const pump = useCallback(() => {
    const flags = flagsRef.current
    if (!flags?.notifications_enabled) {
      return
    }
    const { queue, show, skipped } = takeShowable(queueRef.current, flags.notifications_max_concurrent, (item) =>
      isCategoryShown(item.category, flags),
    )
    queueRef.current = queue
    for (const notification of show) {
      showToast(notification, flags, () => {
        queueRef.current = release(queueRef.current, notification.id)
        pump()
      })
    }
    acks.add([...show, ...skipped].map((item) => item.id))
  }, [acks])

  const receiveAll = useCallback(
    (notifications: readonly Notification[]) => {
      queueRef.current = receive(queueRef.current, notifications)
      pump()
    },
    [pump],
  )

  const applyFlags = useCallback(
    (flags: FeatureFlags | undefined) => {
      flagsRef.current = flags
      if (flags && !flags.notifications_enabled) {
        // Switched off: clear the screen. Waiting notifications stay queued for when they are switched on again.
        for (const id of queueRef.current.visible) {
          toast.dismiss(id)
        }
        return
      }
      pump()
    },
    [pump],
  )

  return { receiveAll, applyFlags }
}

function showToast(notification: Notification, flags: FeatureFlags, onClose: () => void) {
  const { color } = notificationTypes[notification.type]
  showByType[notification.type](notification.title || notification.message, {
    id: notification.id,
    testId: `toast-${notification.id}`,
    description: notification.title ? notification.message : undefined,
    duration: displayDuration(notification, flags),
    className: colorClasses[color],
    onDismiss: onClose,
    onAutoClose: onClose,
  })
}
