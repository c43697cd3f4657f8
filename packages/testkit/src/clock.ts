/** A clock that stands still until a test moves it. */
export function createTestClock(start: Date | string = '2026-01-15T12:00:00.000Z') {
  let current = new Date(start).getTime()
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms
    },
    set(at: Date | string) {
      current = new Date(at).getTime()
    },
  }
}

export type TestClock = ReturnType<typeof createTestClock>
