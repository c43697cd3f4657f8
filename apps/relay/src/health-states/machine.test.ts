import { ItemHealth } from '@relay/contracts'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import {
  combinedHealth,
  type HealthSnapshot,
  nextHealth,
  type Outcome,
  startingHealth,
  stoppedHealth,
} from './machine.js'

const rules = { failuresBeforeFailing: 3, successesBeforeHealthy: 2 }
const ok: Outcome = { ok: true }
const fail: Outcome = { ok: false, error: 'connect ECONNREFUSED' }
const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()

/** Feeds the outcomes from `start`, one second apart; returns every state passed through. */
function run(outcomes: Outcome[], start: HealthSnapshot = startingHealth(at(0)), settings = rules) {
  const states: HealthSnapshot[] = []
  let current = start
  outcomes.forEach((outcome, i) => {
    current = nextHealth(current, outcome, at(i + 1), settings)
    states.push(current)
  })
  return states
}

const healthy = () => run([ok]).at(-1) as HealthSnapshot
const failing = () => run([fail, fail, fail]).at(-1) as HealthSnapshot

describe('health state machine', () => {
  it('starts healthy on the first success, or degraded with what the outcome says', () => {
    expect(run([ok])[0]).toMatchObject({ state: 'healthy', reason: null, since: at(1) })
    expect(run([{ ok: true, degraded: '2 sensors lost' }])[0]).toMatchObject({
      state: 'degraded',
      reason: '2 sensors lost',
    })
  })

  it('a starting item stays starting below the failure threshold and fails at it', () => {
    expect(run([fail, fail, fail]).map((s) => [s.state, s.consecutiveFailures])).toEqual([
      ['starting', 1],
      ['starting', 2],
      ['failing', 3],
    ])
  })

  it('a healthy item is degraded by failures below the threshold, failing at it, since the change', () => {
    const states = run([fail, fail, fail, fail], healthy())
    expect(states.map((s) => s.state)).toEqual(['degraded', 'degraded', 'failing', 'failing'])
    expect(states[0]?.reason).toBe('connect ECONNREFUSED (1 of 3 failures before failing)')
    expect(states.map((s) => s.since)).toEqual([at(1), at(1), at(3), at(3)])
    expect(states[3]).toMatchObject({ reason: 'connect ECONNREFUSED', consecutiveFailures: 4 })
  })

  it('a success below the threshold resets the failure count', () => {
    const states = run([fail, fail, ok, fail, fail, ok], healthy())
    expect(states.map((s) => s.state)).toEqual(['degraded', 'degraded', 'healthy', 'degraded', 'degraded', 'healthy'])
  })

  it('a failing item needs the recovery threshold of consecutive successes; a failure between restarts it', () => {
    const states = run([ok, fail, ok, ok], failing())
    expect(states.map((s) => [s.state, s.consecutiveSuccesses])).toEqual([
      ['failing', 1],
      ['failing', 0],
      ['failing', 1],
      ['healthy', 2],
    ])
    expect(states[3]).toMatchObject({ reason: null, consecutiveFailures: 0, since: at(4) })
  })

  it.each([
    [1, 1],
    [5, 4],
  ])('follows other thresholds: %i failures, %i successes', (failuresBeforeFailing, successesBeforeHealthy) => {
    const settings = { failuresBeforeFailing, successesBeforeHealthy }
    const failed = run(Array(failuresBeforeFailing).fill(fail), healthy(), settings)
    expect(failed.findIndex((s) => s.state === 'failing')).toBe(failuresBeforeFailing - 1)
    const recovered = run(Array(successesBeforeHealthy).fill(ok), failed.at(-1), settings)
    expect(recovered.findIndex((s) => s.state === 'healthy')).toBe(successesBeforeHealthy - 1)
  })

  it('a stopped item fed an outcome starts over', () => {
    expect(run([fail], stoppedHealth(at(0)))[0]).toMatchObject({ state: 'starting', consecutiveFailures: 1 })
    expect(Value.Check(ItemHealth, stoppedHealth(at(0), 'Locked'))).toBe(true)
  })
})

describe('combined health of a junction', () => {
  const part = (name: string, state: HealthSnapshot['state'], reason: string | null = null) => ({
    name,
    health: { state, since: at(1), reason, consecutiveFailures: state === 'failing' ? 3 : 0 },
  })

  it.each([
    [['healthy', 'healthy'], 'healthy'],
    [['healthy', 'starting'], 'starting'],
    [['healthy', 'degraded'], 'degraded'],
    [['healthy', 'failing'], 'degraded'],
    [['failing', 'failing'], 'failing'],
    [['failing', 'stopped'], 'failing'],
  ] as const)('%j is %s', (states, expected) => {
    const health = combinedHealth(
      states.map((state, i) => part(`p${i}`, state)),
      at(0),
    )
    expect(health.state).toBe(expected)
  })

  it('names what fails', () => {
    const health = combinedHealth([part('API', 'failing', 'boom'), part('Wall', 'healthy')], at(0))
    expect(health).toMatchObject({ state: 'degraded', reason: 'API failing' })
  })
})
