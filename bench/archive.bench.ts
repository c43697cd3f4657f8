import { execFile, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { backupQuota, MB, type UploadGrant } from '@relay/contracts'
import SQLite from 'better-sqlite3'
import { defaultPacking } from '../apps/relay/src/backups/archive/create-archive.ts'
import { compileArchiveChild } from './lib/archive-build.ts'
import type { ArchiveChildCloud, ArchiveChildResult } from './lib/archive-child.ts'
import type { Benchmark, Figure, Reference } from './lib/benchmark.ts'
import { type BenchCloud, benchPassword, startCloud } from './lib/cloud.ts'
import { range, roundedParts } from './lib/compare.ts'
import {
  type RelayBackup,
  type RelayProbe,
  type RelayProcess,
  signInRelay,
  startRelayProcess,
} from './lib/relay-process.ts'
import { seedReadings } from './lib/seed-readings.ts'
import { median } from './lib/throughput.ts'

const run = promisify(execFile)
const databaseBytes = 200 * MB
const rounds = 3
const tools = ['sqlite3', 'zip', 'sha256sum', 'curl', 'restic', '/usr/bin/time']

/** What one contender's round leaves for the steps after it (an upload step reads the archive). */
type Round = {
  /** A fresh folder for this contender's round, removed after it. */
  dir: string
  databaseFile: string
  /** A fresh cloud user of this round, and the backend id it uploads as. */
  cloud?: ArchiveChildCloud
  archiveFile?: string
  archiveBytes?: number
  sha256?: string
  grant?: UploadGrant
  backupId?: string
  /** The cloud backup the relay made this round, deleted after it through the relay. */
  relayBackupId?: string
  child?: ArchiveChildResult
  /** What the running relay's probe saw over the round: event-loop delay, peak RSS, CPU time. */
  relay?: RelayProbe
  /** The largest maxRSS of the round's processes run under /usr/bin/time, in MB. */
  peakRssMb?: number
}

/**
 * One timed step. Steps run in order and their times add up to the total; a step that times parts of
 * itself (our child) returns them by name.
 */
type Step = { name: string; run(round: Round): Promise<number | Record<string, number>> }

type Contender = {
  name: string
  /** Untimed set-up before the steps (a fresh cloud user, a fresh restic repository). */
  prepare?(round: Round): Promise<void>
  steps: Step[]
  /** Untimed clean-up after the steps (the uploaded backup is deleted). */
  finish?(round: Round): Promise<void>
}

type Sample = {
  totalMs: number
  steps: Record<string, number>
  archiveBytes: number
  child?: ArchiveChildResult
  relay?: RelayProbe
  peakRssMb?: number
}

/** The zip levels of the native pipeline: 3, the level of our archive, and 6, zip's default. */
const zipLevels = [3, 6] as const
type ZipLevel = (typeof zipLevels)[number]

/**
 * A whole cloud backup of a 200 MB database of sensor readings, to a real cloud on its embedded object
 * store: ours (the relay's archive module, request-upload, its streamed uploadFile and complete-upload,
 * on plain Node in a child process) beside the native pipeline (`sqlite3 .backup`, `zip -3` or `zip -6`,
 * `sha256sum` and `curl` for the same three requests) and beside `restic backup` into a fresh local
 * repository, which has no upload.
 */
export const benchmark: Benchmark = {
  name: 'archive',
  async run() {
    const missing = tools.filter((tool) => spawnSync(tool, ['--version']).error)
    if (missing.length > 0) {
      throw new Error(
        `the archive bench needs ${missing.join(', ')}: apt-get install -y sqlite3 zip coreutils curl restic time`,
      )
    }
    const work = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-archive-'))
    let cloud: BenchCloud | undefined
    let relay: RelayProcess | undefined
    try {
      const dataDir = path.join(work, 'data')
      console.error('  seeding a 200 MB database of sensor readings')
      const { rows } = await seedReadings(dataDir, {
        targetBytes: databaseBytes,
        now: new Date('2026-11-22T13:00:00Z'),
      })
      mkdirSync(path.join(dataDir, 'keys'), { mode: 0o700 })
      writeFileSync(path.join(dataDir, 'keys', 'secrets.key'), Buffer.alloc(32, 1), { mode: 0o600 })
      writeFileSync(
        path.join(dataDir, 'identity.json'),
        `${JSON.stringify({ backendId: randomUUID(), createdAt: new Date().toISOString() })}\n`,
      )
      const databaseFile = path.join(dataDir, 'relay.db')
      const compiled = compileArchiveChild(path.join(work, 'compiled'))
      cloud = await startCloud(path.join(work, 'cloud'))
      const started = cloud
      let users = 0
      // A fresh user per round, so the quotas (50 MB per backup, 500 MB and 500 backups per user) and
      // the backend's ownership never carry over from one round to the next.
      const signUp = async (round: Round) => {
        const index = users++
        const { token } = await started.newUser(`bench-${index}@example.com`)
        round.cloud = { cloudUrl: started.base, token, backendId: `bench-${index}` }
      }
      const deleteBackup = async (round: Round) => {
        if (round.cloud && round.backupId) {
          const response = await fetch(`${started.base}/cloud-backups/${round.backupId}`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${round.cloud.token}` },
          })
          if (!response.ok) {
            throw new Error(`deleting backup ${round.backupId} answered ${response.status}`)
          }
        }
      }

      const ours: Contender = {
        name: 'ours',
        prepare: signUp,
        steps: [
          {
            name: 'backup',
            async run(round) {
              const cloudOf = need(round.cloud, 'a cloud user')
              const options = {
                databaseFile: round.databaseFile,
                dataDir,
                tempDir: round.dir,
                backendId: cloudOf.backendId,
                appVersion: '0.0.0',
                schemaVersion: 'bench',
                createdAt: new Date().toISOString(),
                components: { includeKeys: true, includeIdentity: true, includeFrameEngine: true },
              }
              const { stdout } = await run(
                process.execPath,
                [compiled.child, compiled.module, JSON.stringify(options), compiled.transfer, JSON.stringify(cloudOf)],
                { maxBuffer: MB },
              )
              const result = JSON.parse(stdout) as ArchiveChildResult
              Object.assign(round, {
                archiveFile: result.file,
                archiveBytes: result.size,
                sha256: result.sha256,
                backupId: result.backupId,
                child: result,
              })
              // The child's own clock: the relay runs this in its process, without a Node start-up.
              return result.steps
            },
          },
        ],
        finish: deleteBackup,
      }
      const nativePipeline = (level: ZipLevel): Contender => ({
        name: `sqlite3 + zip -${level} + curl`,
        prepare: signUp,
        steps: [
          timed('sqlite3 .backup', (round) => ['sqlite3', [round.databaseFile, `.backup '${copyOf(round)}'`]]),
          timed(`zip -${level}`, (round) => {
            round.archiveFile = path.join(round.dir, 'backup.zip')
            return ['zip', [`-${level}`, '-q', '-j', round.archiveFile, copyOf(round)]]
          }),
          timed(
            'sha256sum',
            (round) => ['sha256sum', [archiveOf(round)]],
            (round, stdout) => {
              round.sha256 = stdout.split(' ')[0]
            },
          ),
          timed(
            'request-upload',
            (round) => {
              const body = {
                filename: 'backup.zip',
                backendId: need(round.cloud, 'a cloud user').backendId,
                uncompressedSize: statSync(copyOf(round)).size,
                compressedSize: statSync(archiveOf(round)).size,
                sha256: round.sha256,
              }
              return curlPost(round, '/cloud-backups/request-upload', body)
            },
            (round, stdout) => {
              round.grant = JSON.parse(stdout) as UploadGrant
              round.backupId = round.grant.backupId
            },
          ),
          timed('curl -T', (round) => {
            const grant = need(round.grant, 'an upload grant')
            const headers = Object.entries(grant.uploadHeaders).flatMap(([name, value]) => ['-H', `${name}: ${value}`])
            return ['curl', ['-sS', '--fail-with-body', '-T', archiveOf(round), ...headers, grant.uploadUrl]]
          }),
          timed('complete-upload', (round) =>
            curlPost(round, '/cloud-backups/complete-upload', {
              backupId: need(round.grant, 'an upload grant').backupId,
              actualCompressedSize: statSync(archiveOf(round)).size,
            }),
          ),
        ],
        finish: deleteBackup,
      })
      const natives = { 3: nativePipeline(3), 6: nativePipeline(6) } satisfies Record<ZipLevel, Contender>
      const restic: Contender = {
        name: 'restic',
        async prepare(round) {
          await run('restic', ['init', '--repo', repositoryOf(round)], { env: resticEnv(round) })
        },
        steps: [
          timed(
            'restic backup',
            (round) => ['restic', ['backup', '--quiet', '--repo', repositoryOf(round), round.databaseFile]],
            undefined,
            resticEnv,
          ),
        ],
      }

      // The relay as users run it: its own process on its compiled dist/, over the same data folder, signed
      // in to the cloud as a browser would, backing up through its HTTP API.
      const email = 'relay@example.com'
      await started.newUser(email)
      // A copy of its own: Debian's sqlite3 3.40 command-line tool, run by the native pipelines, deletes the
      // write-ahead log of a database another process holds open, which breaks that process's connection.
      const relayDataDir = path.join(work, 'relay-data')
      cpSync(dataDir, relayDataDir, { recursive: true })
      relay = await startRelayProcess(relayDataDir, started.base)
      await signInRelay(relay.url, started.base, email, benchPassword)
      const idle = await relay.probe()
      console.error(`  relay idle: ${JSON.stringify(idle)}`)
      const runningRelay = relay
      const throughRelay = (name: string, passphrase?: string): Contender => ({
        name,
        async prepare() {
          if (passphrase) {
            await runningRelay.call('PUT', '/api/cloud-backups/encryption', { passphrase })
          }
          await runningRelay.probe()
        },
        steps: [
          {
            name: 'relay backup',
            async run(round) {
              const backup = await runningRelay.backup()
              round.relay = await runningRelay.probe()
              round.archiveBytes = backup.bytes
              round.relayBackupId = backup.backupId
              const staged = Object.values(backup.stageMs).reduce((sum, ms) => sum + ms, 0)
              return { ...backup.stageMs, 'request and polling': Math.max(0, backup.wallMs - staged) }
            },
          },
        ],
        async finish(round) {
          if (round.relayBackupId) {
            await runningRelay.call('DELETE', `/api/cloud-backups/${round.relayBackupId}`)
          }
          if (passphrase) {
            await runningRelay.call('DELETE', '/api/cloud-backups/encryption')
          }
        },
      })
      const relayPlain = throughRelay('relay')
      const relayEncrypted = throughRelay('relay (encrypted)', 'bench passphrase for the archive')
      const contenders = [relayPlain, relayEncrypted, ours, natives[3], natives[6], restic]

      const samples = new Map<Contender, Sample[]>(contenders.map((contender) => [contender, []]))
      for (let index = 0; index < rounds; index++) {
        // Rotating the order spreads drift (page cache, heat, other load) over every contender.
        const order = contenders.map((_, i) => contenders[(i + index) % contenders.length] as Contender)
        for (const contender of order) {
          const sample = await measure(contender, work, databaseFile, index)
          samples.get(contender)?.push(sample)
          const steps = Object.entries(sample.steps).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`)
          const rss = sample.child?.peakRssMb ?? sample.peakRssMb
          console.error(
            `  round ${index + 1}/${rounds} ${contender.name}: ${sample.totalMs.toFixed(0)} ms (${steps.join(', ')}), ` +
              `${(sample.archiveBytes / MB).toFixed(1)} MB, peak RSS ${rss?.toFixed(0)} MB` +
              (sample.child ? `, longest event-loop delay ${sample.child.maxEventLoopDelayMs.toFixed(1)} ms` : ''),
          )
        }
      }
      const repeated = await repeatedBackups(runningRelay, work, path.join(relayDataDir, 'relay.db'))
      return [
        ...figures(samples, { ours, natives, restic }, { rows, databaseBytes: statSync(databaseFile).size }),
        ...relayFigures(samples, { relayPlain, relayEncrypted, ours, restic }, repeated, idle),
      ]
    } finally {
      await relay?.close()
      await cloud?.close()
      rmSync(work, { recursive: true, force: true })
    }
  },
}

async function measure(contender: Contender, work: string, databaseFile: string, index: number): Promise<Sample> {
  const dir = path.join(work, `round-${index}-${contender.name.replace(/\W+/g, '-')}`)
  mkdirSync(dir)
  const round: Round = { dir, databaseFile }
  try {
    await contender.prepare?.(round)
    const steps: Record<string, number> = {}
    for (const step of contender.steps) {
      const result = await step.run(round)
      Object.assign(steps, typeof result === 'number' ? { [step.name]: result } : result)
    }
    const archiveBytes = round.archiveBytes ?? sizeOf(round.archiveFile ?? repositoryOf(round))
    const totalMs = Object.values(steps).reduce((sum, ms) => sum + ms, 0)
    await contender.finish?.(round)
    return { totalMs, steps, archiveBytes, child: round.child, relay: round.relay, peakRssMb: round.peakRssMb }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A step running one command under GNU time (for its maxRSS); `after` reads its standard output.
 * The wall time is the command's, spawn included.
 */
function timed(
  name: string,
  command: (round: Round) => [string, string[]],
  after?: (round: Round, stdout: string) => void,
  env?: (round: Round) => NodeJS.ProcessEnv,
): Step {
  return {
    name,
    async run(round) {
      const [file, args] = command(round)
      const rssFile = path.join(round.dir, 'max-rss')
      const started = performance.now()
      const { stdout } = await run('/usr/bin/time', ['-f', '%M', '-o', rssFile, file, ...args], {
        env: env?.(round) ?? process.env,
        maxBuffer: MB,
      })
      const ms = performance.now() - started
      const rssMb = Number(readFileSync(rssFile, 'utf8').trim()) / 1024
      round.peakRssMb = Math.max(round.peakRssMb ?? 0, rssMb)
      after?.(round, stdout)
      return ms
    },
  }
}

/** `curl` POSTing a JSON body to the cloud with the round's token, as a shell script would. */
function curlPost(round: Round, urlPath: string, body: unknown): [string, string[]] {
  const { cloudUrl, token } = need(round.cloud, 'a cloud user')
  return [
    'curl',
    [
      '-sS',
      '--fail-with-body',
      '-H',
      `authorization: Bearer ${token}`,
      '-H',
      'content-type: application/json',
      '--data-raw',
      JSON.stringify(body),
      `${cloudUrl}${urlPath}`,
    ],
  ]
}

function figures(
  samples: Map<Contender, Sample[]>,
  { ours, natives, restic }: { ours: Contender; natives: Record<ZipLevel, Contender>; restic: Contender },
  database: { rows: number; databaseBytes: number },
): Figure[] {
  const of = (contender: Contender) => samples.get(contender) ?? []
  // With an odd number of rounds the median total is one round's, so its steps add up to it.
  const medianRound = (contender: Contender) => {
    const sorted = [...of(contender)].sort((a, b) => a.totalMs - b.totalMs)
    return sorted[(sorted.length - 1) / 2] as Sample
  }
  const seconds = (contender: Contender) => medianRound(contender).totalMs / 1000
  const megabytes = (contender: Contender) => median(of(contender).map((sample) => sample.archiveBytes)) / MB
  const timeRange = (contender: Contender) =>
    `${range(of(contender).map((sample) => sample.totalMs / 1000))} s over the ${rounds} rounds`
  const stepsOf = (contender: Contender) => {
    const { steps, totalMs } = medianRound(contender)
    const seconds = roundedParts(
      Object.values(steps).map((ms) => ms / 1000),
      2,
    )
    const parts = Object.keys(steps).map((step, index) => `${step} ${seconds[index]} s`)
    const sum = parts.length > 1 ? ` = ${(totalMs / 1000).toFixed(2)} s` : ''
    return `${parts.join(' + ')}${sum} (median round; ${timeRange(contender)})`
  }
  const peakOf = (contender: Contender) => Math.max(...of(contender).map((sample) => sample.peakRssMb ?? 0))
  const children = of(ours).flatMap((sample) => (sample.child ? [sample.child] : []))
  const childPeaks = children.map((child) => child.peakRssMb)
  const peakRssMb = Math.max(...childPeaks)
  const baselineRssMb = median(children.map((child) => child.baselineRssMb))
  const delays = children.map((child) => child.maxEventLoopDelayMs)
  const stepDelayMedians = Object.keys(children[0]?.stepDelaysMs ?? {})
    .map((step) => `${step} ${median(children.map((child) => child.stepDelaysMs[step] ?? 0)).toFixed(1)} ms`)
    .join(', ')
  const setting =
    `${database.rows.toLocaleString('en')} readings, ${(database.databaseBytes / MB).toFixed(0)} MB file; ` +
    `${rounds} rotating rounds each, a fresh cloud user each; cloud on PGlite with its embedded object store ` +
    'in the bench process, SHA-256 pinned on both uploads'
  const oursSteps =
    `ours: ${stepsOf(ours)}, zlib level ${defaultPacking.level} on ${defaultPacking.concurrency - 1} cores, ` +
    'plain Node in a child process, its own clock'
  const endToEnd = 'backup end-to-end time (200 MB database: snapshot + zip + upload + confirm)'
  const pipelineOf = (level: ZipLevel): Reference => ({
    kind: 'peer',
    name: `sqlite3 .backup + zip -${level} + sha256sum + curl request-upload + curl -T + curl complete-upload`,
  })
  const pipelineRows = zipLevels.map(
    (level): Figure => ({
      figure: `${endToEnd}, vs sqlite3 .backup + zip -${level} + curl -T`,
      ours: seconds(ours),
      reference: seconds(natives[level]),
      comparedWith: pipelineOf(level),
      unit: 's',
      peakRssMb,
      notes:
        `${stepsOf(natives[level])}, each step a process timed from spawn to exit` +
        `${level === defaultPacking.level ? ', the same deflate level as ours' : ", zip's default level"}; ` +
        `${oursSteps}; ${setting}`,
    }),
  )
  const sizeRows = zipLevels.map(
    (level): Figure => ({
      figure: `backup archive size (200 MB database), vs zip -${level}`,
      ours: megabytes(ours),
      reference: megabytes(natives[level]),
      comparedWith: { kind: 'peer', name: `zip -${level} of the sqlite3 .backup copy` },
      unit: 'MB',
      peakRssMb,
      notes:
        `ours holds the database, the key file, identity.json and a manifest, zlib level ${defaultPacking.level}; ` +
        `${zipLevels
          .filter((other) => other !== level)
          .map((other) => `zip -${other} ${megabytes(natives[other]).toFixed(2)} MB`)
          .join(', ')}; ` +
        `restic repository ${megabytes(restic).toFixed(2)} MB; quota ${backupQuota.maxBackupBytes / MB} MB per backup`,
    }),
  )
  return [
    ...pipelineRows,
    {
      figure: `${endToEnd}, vs restic backup`,
      ours: seconds(ours),
      reference: seconds(restic),
      comparedWith: { kind: 'peer', name: 'restic backup into a fresh local repository, no upload, init not timed' },
      unit: 's',
      peakRssMb,
      notes: `${stepsOf(restic)}; ${oursSteps}; ${setting}`,
    },
    ...sizeRows,
    {
      figure: 'backup peak RSS (200 MB database, end-to-end)',
      ours: peakRssMb,
      reference: peakOf(natives[3]),
      comparedWith: {
        kind: 'peer',
        name: 'the largest maxRSS of any one process of the zip -3 pipeline (GNU time)',
      },
      unit: 'MB',
      peakRssMb,
      notes:
        `the budget is 150 MB whatever the database size; ours: the child's peak RSS (VmHWM) over the whole ` +
        `backup, largest of ${rounds} rounds (${range(childPeaks)} MB), ${baselineRssMb.toFixed(0)} MB of it ` +
        `Node with the modules and fetch loaded; zip -6 pipeline ${peakOf(natives[6]).toFixed(0)} MB; ` +
        `restic backup ${peakOf(restic).toFixed(0)} MB`,
    },
    {
      figure: 'backup longest event-loop delay (200 MB database, end-to-end)',
      ours: median(delays),
      reference: null,
      comparedWith: { kind: 'none', name: 'the budget of 50 ms' },
      unit: 'ms',
      peakRssMb,
      notes:
        `each round's longest delay (monitorEventLoopDelay in the child, 5 ms resolution) from the snapshot to ` +
        `the confirmed upload, median of ${rounds} (${range(delays)} ms); each step's longest, median: ` +
        stepDelayMedians,
    },
  ]
}

/** One round of the repeated backups: restic into the repository it already filled, and the relay. */
type RepeatedSample = { resticMs: number; resticGrowth: number; relay: RelayBackup; probe: RelayProbe }

/**
 * Backups repeated after a 1 % change: each round appends 1 % more readings (a relay's history grows at
 * its end), then restic backs up into the repository that already holds the database and the relay
 * backs up through its API; restic stores only the changed chunks, the relay a whole archive.
 */
async function repeatedBackups(relay: RelayProcess, work: string, databaseFile: string): Promise<RepeatedSample[]> {
  const round: Round = { dir: path.join(work, 'repeated'), databaseFile }
  mkdirSync(round.dir)
  const repository = repositoryOf(round)
  const restic = (args: string[]) => run('restic', [...args, '--repo', repository], { env: resticEnv(round) })
  await restic(['init'])
  await restic(['backup', '--quiet', databaseFile])
  const samples: RepeatedSample[] = []
  for (let index = 0; index < rounds; index++) {
    appendOnePercent(databaseFile, index)
    const before = sizeOf(repository)
    let resticMs = 0
    const timeRestic = async () => {
      const started = performance.now()
      await restic(['backup', '--quiet', databaseFile])
      resticMs = performance.now() - started
    }
    const timeRelay = async () => {
      await relay.probe()
      const backup = await relay.backup()
      return { backup, probe: await relay.probe() }
    }
    // Alternating which goes first spreads the page cache's help over both.
    let measured: Awaited<ReturnType<typeof timeRelay>>
    if (index % 2 === 0) {
      await timeRestic()
      measured = await timeRelay()
    } else {
      measured = await timeRelay()
      await timeRestic()
    }
    const resticGrowth = sizeOf(repository) - before
    await relay.call('DELETE', `/api/cloud-backups/${measured.backup.backupId}`)
    console.error(
      `  repeated ${index + 1}/${rounds}: relay ${measured.backup.wallMs.toFixed(0)} ms (${(measured.backup.bytes / MB).toFixed(1)} MB), ` +
        `restic ${resticMs.toFixed(0)} ms (+${(resticGrowth / MB).toFixed(1)} MB)`,
    )
    samples.push({ resticMs, resticGrowth, relay: measured.backup, probe: measured.probe })
  }
  return samples
}

/** Appends 1 % more readings through a connection of its own, then folds the log into the file restic reads. */
function appendOnePercent(databaseFile: string, round: number): void {
  const sqlite = new SQLite(databaseFile)
  try {
    sqlite.pragma('busy_timeout = 5000')
    sqlite
      .prepare(`insert into readings (sensor_id, ts, value, unit, quality)
        select sensor_id, ts, value + 0.1, unit, quality from readings where id % 100 = ?`)
      .run(round)
    sqlite.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    sqlite.close()
  }
}

function relayFigures(
  samples: Map<Contender, Sample[]>,
  { relayPlain, relayEncrypted, ours, restic }: Record<'relayPlain' | 'relayEncrypted' | 'ours' | 'restic', Contender>,
  repeated: RepeatedSample[],
  idle: RelayProbe,
): Figure[] {
  const of = (contender: Contender) => samples.get(contender) ?? []
  const seconds = (contender: Contender) => median(of(contender).map((sample) => sample.totalMs)) / 1000
  const probes = of(relayPlain).flatMap((sample) => (sample.relay ? [sample.relay] : []))
  const encryptedProbes = of(relayEncrypted).flatMap((sample) => (sample.relay ? [sample.relay] : []))
  const peakRssMb = Math.max(...probes.map((probe) => probe.peakRssMb))
  const stages = (contender: Contender) => {
    const rounds = of(contender)
    return Object.keys(rounds[0]?.steps ?? {})
      .map((stage) => `${stage} ${(median(rounds.map((sample) => sample.steps[stage] ?? 0)) / 1000).toFixed(2)} s`)
      .join(', ')
  }
  const setting =
    `through the relay's API in its own process (compiled dist/, plain Node): POST /api/cloud-backups/create, ` +
    `the operation polled every 20 ms to done; stages (medians) ${stages(relayPlain)}; ` +
    `median of ${rounds} rounds (${range(of(relayPlain).map((sample) => sample.totalMs / 1000))} s), rotated with the other contenders`
  const endToEnd = 'relay backup end-to-end through its HTTP API (200 MB database)'
  const resticRepeated = median(repeated.map((sample) => sample.resticMs)) / 1000
  const relayRepeated = median(repeated.map((sample) => sample.relay.wallMs)) / 1000
  return [
    {
      figure: `${endToEnd}, vs restic backup`,
      ours: seconds(relayPlain),
      reference: seconds(restic),
      comparedWith: { kind: 'peer', name: 'restic backup of the same file into a fresh local repository, no upload' },
      unit: 's',
      peakRssMb,
      notes: setting,
    },
    ...zipLevels.map(
      (level): Figure => ({
        figure: `${endToEnd}, vs sqlite3 .backup + zip -${level} + curl -T`,
        ours: seconds(relayPlain),
        reference: seconds(
          [...samples.keys()].find((contender) => contender.name === `sqlite3 + zip -${level} + curl`) as Contender,
        ),
        comparedWith: {
          kind: 'peer',
          name: `sqlite3 .backup + zip -${level} + sha256sum + curl request-upload + curl -T + curl complete-upload`,
        },
        unit: 's',
        peakRssMb,
        notes: setting,
      }),
    ),
    {
      figure: `${endToEnd}, vs the same backup in a bare child process`,
      ours: seconds(relayPlain),
      reference: seconds(ours),
      comparedWith: {
        kind: 'peer',
        name: 'the archive module, request-upload, upload and complete-upload in a child process with no server',
      },
      unit: 's',
      peakRssMb,
      notes: `what the running relay adds to the bare work (its server, polling, stage records); ${setting}`,
    },
    {
      figure: `${endToEnd}, encrypted vs not`,
      ours: seconds(relayEncrypted),
      reference: seconds(relayPlain),
      comparedWith: { kind: 'peer', name: 'the same relay backup without a passphrase' },
      unit: 's',
      peakRssMb: Math.max(...encryptedProbes.map((probe) => probe.peakRssMb)),
      notes:
        `AES-256-GCM over the packed archive; stages (medians) ${stages(relayEncrypted)}; ` +
        `archive ${(median(of(relayEncrypted).map((sample) => sample.archiveBytes)) / MB).toFixed(2)} MB encrypted, ` +
        `${(median(of(relayPlain).map((sample) => sample.archiveBytes)) / MB).toFixed(2)} MB plain`,
    },
    {
      figure: 'relay repeated backup after a 1 % change (200 MB database), vs restic repeated backup',
      ours: relayRepeated,
      reference: resticRepeated,
      comparedWith: { kind: 'peer', name: 'restic backup into the repository that already holds the database' },
      unit: 's',
      peakRssMb: Math.max(...repeated.map((sample) => sample.probe.peakRssMb)),
      notes:
        `each round appends 1 % more readings, then both back up (order alternating); median of ${rounds}; ` +
        `relay ${range(repeated.map((sample) => sample.relay.wallMs / 1000))} s, restic ${range(repeated.map((sample) => sample.resticMs / 1000))} s; ` +
        'restic stores only new chunks, the relay a whole archive each time',
    },
    {
      figure: 'relay repeated backup: bytes stored, vs restic repository growth',
      ours: median(repeated.map((sample) => sample.relay.bytes)) / MB,
      reference: median(repeated.map((sample) => sample.resticGrowth)) / MB,
      comparedWith: { kind: 'peer', name: "restic's repository growth for the same repeated backup" },
      unit: 'MB',
      peakRssMb,
      notes: `median of ${rounds}; what each backup adds to the account's quota against what restic adds to its repository`,
    },
    {
      figure: 'relay peak RSS during a backup (200 MB database)',
      ours: peakRssMb,
      reference: null,
      comparedWith: { kind: 'none', name: 'the budget of 150 MB' },
      unit: 'MB',
      peakRssMb,
      notes:
        `the relay process's RSS sampled every 20 ms by a preloaded probe, largest over ${rounds} rounds ` +
        `(${range(probes.map((probe) => probe.peakRssMb))} MB); before any backup, started and signed in, the ` +
        `relay peaked at ${idle.peakRssMb.toFixed(0)} MB; relay CPU time per backup ` +
        `${range(probes.map((probe) => probe.cpuSeconds))} s (every thread)`,
    },
    {
      figure: 'relay longest event-loop delay during a backup (200 MB database)',
      ours: median(probes.map((probe) => probe.maxDelayMs)),
      reference: null,
      comparedWith: { kind: 'none', name: 'the budget of 50 ms' },
      unit: 'ms',
      peakRssMb,
      notes: `monitorEventLoopDelay in the relay process (5 ms resolution), median of ${rounds} rounds (${range(probes.map((probe) => probe.maxDelayMs))} ms)`,
    },
  ]
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new Error(`this step needs ${what} from the steps before it`)
  }
  return value
}

function copyOf(round: Round): string {
  return path.join(round.dir, 'copy.db')
}

function archiveOf(round: Round): string {
  return need(round.archiveFile, 'an archive')
}

function repositoryOf(round: Round): string {
  return path.join(round.dir, 'repository')
}

function resticEnv(round: Round): NodeJS.ProcessEnv {
  return { ...process.env, RESTIC_PASSWORD: 'bench', RESTIC_CACHE_DIR: path.join(round.dir, 'cache') }
}

/** Bytes of a file, or of every file under a folder. */
function sizeOf(target: string): number {
  const info = statSync(target)
  if (!info.isDirectory()) {
    return info.size
  }
  const listed = spawnSync('du', ['-sb', target], { encoding: 'utf8' })
  return Number(listed.stdout.split('\t')[0])
}
