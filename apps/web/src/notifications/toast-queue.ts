/**
 * The line of notifications waiting for a toast slot. Sonner's own `visibleToasts` only hides the
 * extra toasts while their timers keep running, so they could close unseen; here a notification
 * waits, untimed, until a visible one closes.
 */
export type ToastQueue<T extends { id: string }> = {
  /** Ids on screen now, oldest first. */
  readonly visible: readonly string[]
  /** Notifications waiting for a slot, first come first served. */
  readonly waiting: readonly T[]
  /** Every id this tab has received, so a notification fetched twice is shown once. */
  readonly seen: ReadonlySet<string>
}

export function createToastQueue<T extends { id: string }>(): ToastQueue<T> {
  return { visible: [], waiting: [], seen: new Set() }
}

/** Adds new notifications at the back of the line; ids seen before are ignored. */
export function receive<T extends { id: string }>(queue: ToastQueue<T>, items: readonly T[]): ToastQueue<T> {
  const seen = new Set(queue.seen)
  const fresh: T[] = []
  for (const item of items) {
    if (!seen.has(item.id)) {
      seen.add(item.id)
      fresh.push(item)
    }
  }
  return fresh.length === 0 ? queue : { ...queue, waiting: [...queue.waiting, ...fresh], seen }
}

export type Taken<T extends { id: string }> = {
  queue: ToastQueue<T>
  /** To show now, in order. */
  show: T[]
  /** Left the line without being shown, because `isShown` refused them. */
  skipped: T[]
}

/**
 * Moves notifications from the front of the line onto the screen until `limit` are visible.
 * Those `isShown` refuses (a hidden category) leave the line at once and never hold it up.
 */
export function takeShowable<T extends { id: string }>(
  queue: ToastQueue<T>,
  limit: number,
  isShown: (item: T) => boolean = () => true,
): Taken<T> {
  const show: T[] = []
  const skipped: T[] = []
  const waiting = [...queue.waiting]
  let free = limit - queue.visible.length
  while (free > 0 && waiting.length > 0) {
    const next = waiting.shift() as T
    if (isShown(next)) {
      show.push(next)
      free--
    } else {
      skipped.push(next)
    }
  }
  if (show.length === 0 && skipped.length === 0) {
    return { queue, show, skipped }
  }
  const visible = [...queue.visible, ...show.map((item) => item.id)]
  return { queue: { ...queue, visible, waiting }, show, skipped }
}

/** Frees the slot of a toast that closed (by itself or by the user). Unknown ids change nothing. */
export function release<T extends { id: string }>(queue: ToastQueue<T>, id: string): ToastQueue<T> {
  if (!queue.visible.includes(id)) {
    return queue
  }
  return { ...queue, visible: queue.visible.filter((visibleId) => visibleId !== id) }
}
