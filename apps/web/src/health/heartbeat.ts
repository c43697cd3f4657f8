import { type HealthBucket, MINUTE } from '@relay/contracts'

/** Minutes the heartbeat bar covers, one slot each, the current minute last. */
export const heartbeatMinutes = 60

/** `partial`: some polls of the minute failed; `failed`: all did; `idle`: none happened. */
export type SlotStatus = 'idle' | 'ok' | 'partial' | 'failed'

export type HeartbeatSlot = {
  start: Date
  status: SlotStatus
  /** The minute in words, for screen readers and the tooltip: "12:04, 3 failed of 12, last error …". */
  label: string
}

/** What an item does each time: a collector polls, a stream sends. */
export type Activity = { singular: string; plural: string }

/** The range the history is asked for: the last `heartbeatMinutes` whole minutes up to now. */
export function heartbeatRange(now: Date): { from: string; to: string } {
  const currentMinute = Math.floor(now.getTime() / MINUTE) * MINUTE
  return {
    from: new Date(currentMinute - (heartbeatMinutes - 1) * MINUTE).toISOString(),
    to: new Date(currentMinute + MINUTE).toISOString(),
  }
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })

/**
 * One slot per minute of the range starting at `from`, filled from the minute buckets found (the
 * relay leaves minutes without polls out).
 */
export function heartbeatSlots(
  from: string,
  buckets: readonly HealthBucket[],
  activity: Activity,
  formatTime: (date: Date) => string = (date) => clock.format(date),
): HeartbeatSlot[] {
  const byMinute = new Map(buckets.map((bucket) => [Date.parse(bucket.start), bucket]))
  const first = Date.parse(from)
  return Array.from({ length: heartbeatMinutes }, (_, index) => {
    const start = new Date(first + index * MINUTE)
    const bucket = byMinute.get(start.getTime())
    const status = statusOf(bucket)
    return { start, status, label: `${formatTime(start)}, ${describe(bucket, activity)}` }
  })
}

function statusOf(bucket: HealthBucket | undefined): SlotStatus {
  if (!bucket || bucket.ok + bucket.failed === 0) {
    return 'idle'
  }
  if (bucket.failed === 0) {
    return 'ok'
  }
  return bucket.ok === 0 ? 'failed' : 'partial'
}

function describe(bucket: HealthBucket | undefined, activity: Activity): string {
  const total = bucket ? bucket.ok + bucket.failed : 0
  if (!bucket || total === 0) {
    return `no ${activity.plural}`
  }
  const noun = total === 1 ? activity.singular : activity.plural
  if (bucket.failed === 0) {
    return `${total} ${noun} ok, ${Math.round(bucket.meanLatencyMs)} ms on average`
  }
  const lastError = bucket.lastError ? `, last error ${bucket.lastError}` : ''
  return `${bucket.failed} failed of ${total} ${noun}${lastError}`
}

/** The bar in a few words, shown beside it: the colours alone never carry the meaning. */
export function heartbeatSummary(slots: readonly HeartbeatSlot[], activity: Activity): string {
  const count = (status: SlotStatus) => slots.filter((slot) => slot.status === status).length
  const failing = count('failed') + count('partial')
  if (count('idle') === slots.length) {
    return `No ${activity.plural} in the last hour`
  }
  if (failing === 0) {
    return 'No failures in the last hour'
  }
  return `Failures in ${failing} of the last ${slots.length} minutes`
}
