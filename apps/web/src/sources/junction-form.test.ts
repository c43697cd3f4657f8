import type { Junction } from '@relay/contracts'
import { describe, expect, it } from 'vitest'
import { changesOf, toJunctionBody, toJunctionDraft } from './junction-form'

describe('junction form', () => {
  it('sends only what changed on a junction, so a running one can still be renamed', () => {
    const junction: Junction = {
      id: 'j',
      name: 'Feed',
      status: 'Running',
      autoStart: false,
      collectorIds: ['c1', 'c2'],
      targets: [{ streamId: 's1', sendRateMs: 1000 }],
      lastError: null,
      health: { state: 'healthy', since: '', reason: null, consecutiveFailures: 0 },
      createdAt: '',
      updatedAt: '',
    }
    const draft = { ...toJunctionDraft(junction), name: 'Lobby feed', collectorIds: ['c2', 'c1'] }
    const check = toJunctionBody(draft)
    expect(check.ok && changesOf(check.body, junction)).toEqual({ name: 'Lobby feed' })

    const faster = toJunctionBody({ ...draft, targets: [{ streamId: 's1', sendRate: '0.25' }] })
    expect(faster.ok && changesOf(faster.body, junction)).toEqual({
      name: 'Lobby feed',
      targets: [{ streamId: 's1', sendRateMs: 250 }],
    })
    expect(toJunctionBody({ ...draft, targets: [{ streamId: 's1', sendRate: '' }] }).ok).toBe(false)
  })
})
