import type { ItemHealth } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { healthBadge } from './health-badge'

const health = (state: ItemHealth['state'], reason: string | null = null): ItemHealth => ({
  state,
  since: '2026-01-01T12:00:00.000Z',
  reason,
  consecutiveFailures: state === 'failing' ? 3 : 0,
})

describe('health badge', () => {
  it('names every state in words with its own tone, failing red and never Running', () => {
    const states = ['stopped', 'starting', 'healthy', 'degraded', 'failing'] as const
    const views = states.map((state) => healthBadge(health(state), 'collector'))
    expect(views.map((view) => [view.label, view.tone])).toEqual([
      ['Stopped', 'muted'],
      ['Starting', 'accent'],
      ['Running', 'ok'],
      ['Degraded', 'warn'],
      ['Failing', 'danger'],
    ])
  })

  it('calls a stopped junction Idle, and a stopped collector or stream Stopped', () => {
    expect(healthBadge(health('stopped'), 'junction').label).toBe('Idle')
    expect(healthBadge(health('healthy'), 'junction').label).toBe('Running')
    expect(healthBadge(health('stopped'), 'stream').label).toBe('Stopped')
  })

  it('gives the reason of a failing, degraded or starting item, not of a stopped one', () => {
    expect(healthBadge(health('failing', 'connect ECONNREFUSED'), 'collector').reason).toBe('connect ECONNREFUSED')
    expect(healthBadge(health('degraded', '2 sensors lost'), 'collector').reason).toBe('2 sensors lost')
    expect(healthBadge(health('starting', 'timeout'), 'stream').reason).toBe('timeout')
    expect(healthBadge(health('stopped', 'locked'), 'collector').reason).toBeNull()
  })
})
