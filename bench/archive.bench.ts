import { execFile, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { backupQuota, MB, type UploadGrant } from '@relay/contracts'
import { defaultPacking } from '../apps/relay/src/backups/archive/create-archive.ts'
import { compileArchiveChild } from './lib/archive-build.ts'
import type { ArchiveChildCloud, ArchiveChildResult } from './lib/archive-child.ts'
import type { Benchmark, Figure, Reference } from './lib/benchmark.ts'
import { type BenchCloud, startCloud } from './lib/cloud.ts'
import { range, roundedParts } from './lib/compare.ts'
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
  child?: ArchiveChildResult
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
    try {
      const dataDir = path.join(work, 'data')
      console.error('  seeding a 200 MB database of sensor readings')
      const { rows } = await seedReadings(dataDir, {
        targetBytes: databaseBytes,
        now: new Date('2026-11-22T13:00:00Z'),
      })
      mkdirSync(path.join(dataDir, 'keys'), { mode: 0o700 })
      writeFileSync(path.join(dataDir, 'keys', 'secrets.key'), Buffer.alloc(32, 1), { mode: 0o600 })
      writeFileSync(path.join(dataDir, 'identity.json'), '{"backendId":"bench"}\n')
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
      const contenders = [ours, natives[3], natives[6], restic]

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
      return figures(samples, { ours, natives, restic }, { rows, databaseBytes: statSync(databaseFile).size })
    } finally {
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
    return { totalMs, steps, archiveBytes, child: round.child, peakRssMb: round.peakRssMb }
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
