/** Time comes from a clock so that schedules and expiry can be tested without waiting. */
export type Clock = { now(): Date }

export const systemClock: Clock = { now: () => new Date() }
