import { type CreateJunctionBody, type Junction, sourceLimits, type UpdateJunctionBody } from '@relay/contracts'

/** A target as edited: the send rate in seconds, as typed. */
export type TargetDraft = { streamId: string; sendRate: string }

export type JunctionDraft = {
  name: string
  autoStart: boolean
  collectorIds: string[]
  targets: TargetDraft[]
}

export const junctionFields = ['name', 'autoStart', 'collectorIds', 'targets'] as const

export const defaultSendRate = String(sourceLimits.sendRate.default / 1000)

export function toJunctionDraft(junction?: Junction): JunctionDraft {
  return {
    name: junction?.name ?? '',
    autoStart: junction?.autoStart ?? false,
    collectorIds: junction?.collectorIds ?? [],
    targets: (junction?.targets ?? []).map((target) => ({
      streamId: target.streamId,
      sendRate: String(target.sendRateMs / 1000),
    })),
  }
}

export type JunctionCheck = { ok: true; body: CreateJunctionBody } | { ok: false; errors: Record<string, string> }

export function toJunctionBody(draft: JunctionDraft): JunctionCheck {
  const targets: CreateJunctionBody['targets'] = []
  for (const target of draft.targets) {
    const seconds = Number(target.sendRate.trim())
    if (target.sendRate.trim() === '' || !Number.isFinite(seconds)) {
      return { ok: false, errors: { targets: 'Enter each send rate as a number of seconds' } }
    }
    targets.push({ streamId: target.streamId, sendRateMs: Math.round(seconds * 1000) })
  }
  return {
    ok: true,
    body: { name: draft.name.trim(), autoStart: draft.autoStart, collectorIds: draft.collectorIds, targets },
  }
}

/**
 * Only what changed: the relay refuses new collectors or targets while a junction runs, and a
 * rename alone must still work then.
 */
export function changesOf(body: CreateJunctionBody, junction: Junction): UpdateJunctionBody {
  const changes: UpdateJunctionBody = {}
  if (body.name !== junction.name) {
    changes.name = body.name
  }
  if (body.autoStart !== junction.autoStart) {
    changes.autoStart = body.autoStart
  }
  if (!sameItems(body.collectorIds, junction.collectorIds)) {
    changes.collectorIds = body.collectorIds
  }
  const key = (targets: CreateJunctionBody['targets']) => targets.map((t) => `${t.streamId}@${t.sendRateMs}`)
  if (!sameItems(key(body.targets), key(junction.targets))) {
    changes.targets = body.targets
  }
  return changes
}

function sameItems(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n')
}
