import { execFile, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { backupQuota, MB } from '@relay/contracts'
import { defaultPacking } from '../apps/relay/src/backups/archive/create-archive.ts'
import { compileArchiveChild } from './lib/archive-build.ts'
import type { ArchiveChildResult } from './lib/archive-child.ts'
import type { Benchmark, Figure } from './lib/benchmark.ts'
import { seedReadings } from './lib/seed-readings.ts'
import { median } from './lib/throughput.ts'

const run = promisify(execFile)
const databaseBytes = 200 * MB
const rounds = 3
const tools = ['sqlite3', 'zip', 'restic']

/** What one contender's round leaves for the steps after it (an upload step reads the archive). */
type Round = {
  /** A fresh folder for this contender's round, removed after it. */
  dir: string
  databaseFile: string
  archiveFile?: string
  archiveBytes?: number
  sha256?: string
  child?: ArchiveChildResult
}

/** One timed step; returns its duration in ms. Steps run in order and their times add up to the total. */
type Step = { name: string; run(round: Round): Promise<number> }

type Contender = {
  name: string
  /** Untimed set-up before the steps (a fresh restic repository). */
  prepare?(round: Round): Promise<void>
  steps: Step[]
}

type Sample = { totalMs: number; steps: Record<string, number>; archiveBytes: number; child?: ArchiveChildResult }

/**
 * A cloud backup's local work on a 200 MB database of sensor readings: ours (snapshot + ZIP, the relay's
 * archive module on plain Node in a child process) beside `sqlite3 .backup` + `zip -6` and beside
 * `restic backup` into a fresh local repository. Contenders are lists of steps, so the upload can be
 * appended to each.
 */
export const benchmark: Benchmark = {
  name: 'archive',
  async run() {
    const missing = tools.filter((tool) => spawnSync(tool, ['--version']).error)
    if (missing.length > 0) {
      throw new Error(`the archive bench needs ${missing.join(', ')}: apt-get install -y sqlite3 zip restic`)
    }
    const work = mkdtempSync(path.join(os.tmpdir(), 'relay-bench-archive-'))
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

      const ours: Contender = {
        name: 'ours',
        steps: [
          {
            name: 'snapshot + zip',
            async run(round) {
              const options = {
                databaseFile: round.databaseFile,
                dataDir,
                tempDir: round.dir,
                backendId: 'bench',
                appVersion: '0.0.0',
                schemaVersion: 'bench',
                createdAt: new Date().toISOString(),
                components: { includeKeys: true, includeIdentity: true, includeFrameEngine: true },
              }
              const { stdout } = await run(
                process.execPath,
                [compiled.child, compiled.module, JSON.stringify(options)],
                {
                  maxBuffer: MB,
                },
              )
              const result = JSON.parse(stdout) as ArchiveChildResult
              Object.assign(round, { archiveFile: result.file, archiveBytes: result.size, sha256: result.sha256 })
              round.child = result
              // The child's own clock: the relay runs this in its process, without a Node start-up.
              return result.wallMs
            },
          },
        ],
      }
      const sqliteZip: Contender = {
        name: 'sqlite3 + zip -6',
        steps: [
          timed('sqlite3 .backup', (round) => ['sqlite3', [round.databaseFile, `.backup '${copyOf(round)}'`]]),
          timed('zip -6', (round) => {
            round.archiveFile = path.join(round.dir, 'backup.zip')
            return ['zip', ['-6', '-q', '-j', round.archiveFile, copyOf(round)]]
          }),
        ],
      }
      const restic: Contender = {
        name: 'restic',
        async prepare(round) {
          await run('restic', ['init', '--repo', repositoryOf(round)], { env: resticEnv(round) })
        },
        steps: [
          timed(
            'restic backup',
            (round) => ['restic', ['backup', '--quiet', '--repo', repositoryOf(round), round.databaseFile]],
            resticEnv,
          ),
        ],
      }
      const contenders = [ours, sqliteZip, restic]

      const samples = new Map<Contender, Sample[]>(contenders.map((contender) => [contender, []]))
      for (let index = 0; index < rounds; index++) {
        // Rotating the order spreads drift (page cache, heat, other load) over every contender.
        const order = contenders.map((_, i) => contenders[(i + index) % contenders.length] as Contender)
        for (const contender of order) {
          const sample = await measure(contender, work, databaseFile, index)
          samples.get(contender)?.push(sample)
          const steps = Object.entries(sample.steps).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`)
          console.error(
            `  round ${index + 1}/${rounds} ${contender.name}: ${sample.totalMs.toFixed(0)} ms (${steps.join(', ')}), ` +
              `${(sample.archiveBytes / MB).toFixed(1)} MB`,
          )
        }
      }
      return figures(samples, { ours, sqliteZip, restic }, { rows, databaseBytes: statSync(databaseFile).size })
    } finally {
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
      steps[step.name] = await step.run(round)
    }
    const archiveBytes = round.archiveBytes ?? sizeOf(round.archiveFile ?? repositoryOf(round))
    const totalMs = Object.values(steps).reduce((sum, ms) => sum + ms, 0)
    return { totalMs, steps, archiveBytes, child: round.child }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function timed(
  name: string,
  command: (round: Round) => [string, string[]],
  env?: (round: Round) => NodeJS.ProcessEnv,
): Step {
  return {
    name,
    async run(round) {
      const [file, args] = command(round)
      const started = performance.now()
      await run(file, args, { env: env?.(round) ?? process.env })
      return performance.now() - started
    },
  }
}

function figures(
  samples: Map<Contender, Sample[]>,
  { ours, sqliteZip, restic }: Record<'ours' | 'sqliteZip' | 'restic', Contender>,
  database: { rows: number; databaseBytes: number },
): Figure[] {
  const of = (contender: Contender) => samples.get(contender) ?? []
  const seconds = (contender: Contender) => median(of(contender).map((sample) => sample.totalMs)) / 1000
  const megabytes = (contender: Contender) => median(of(contender).map((sample) => sample.archiveBytes)) / MB
  const range = (contender: Contender) => {
    const values = of(contender).map((sample) => sample.totalMs / 1000)
    return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)} s`
  }
  const stepMedians = (contender: Contender) =>
    (contender.steps ?? [])
      .map(
        (step) =>
          `${step.name} ${(median(of(contender).map((sample) => sample.steps[step.name] ?? 0)) / 1000).toFixed(2)} s`,
      )
      .join(' + ')
  const children = of(ours).flatMap((sample) => (sample.child ? [sample.child] : []))
  const peakRssMb = Math.max(...children.map((child) => child.peakRssMb))
  const baselineRssMb = median(children.map((child) => child.baselineRssMb))
  const delays = children.map((child) => child.maxEventLoopDelayMs)
  const common =
    `${database.rows.toLocaleString('en')} readings, ${(database.databaseBytes / MB).toFixed(0)} MB file; ` +
    `median of ${rounds} rotating rounds; ours: ${stepMedians(ours)} (${range(ours)}), zlib level ` +
    `${defaultPacking.level} on ${defaultPacking.concurrency - 1} cores, plain Node in a child process`
  return [
    {
      figure: 'backup snapshot + archive time (200 MB database), peer sqlite3 .backup + zip -6',
      ours: seconds(ours),
      peer: seconds(sqliteZip),
      unit: 's',
      peakRssMb,
      notes: `peer: ${stepMedians(sqliteZip)} (${range(sqliteZip)}); ${common}`,
    },
    {
      figure: 'backup snapshot + archive time (200 MB database), peer restic backup',
      ours: seconds(ours),
      peer: seconds(restic),
      unit: 's',
      peakRssMb,
      notes: `peer: restic backup into a fresh local repository, init not timed (${range(restic)}); ${common}`,
    },
    {
      figure: 'backup archive size (200 MB database)',
      ours: megabytes(ours),
      peer: megabytes(sqliteZip),
      unit: 'MB',
      peakRssMb,
      notes:
        `peer: zip -6 of the sqlite3 .backup copy; restic repository ${megabytes(restic).toFixed(1)} MB; ` +
        `quota ${backupQuota.maxBackupBytes / MB} MB per backup`,
    },
    {
      figure: 'backup archive longest event-loop delay (200 MB database)',
      ours: median(delays),
      peer: 0,
      unit: 'ms',
      peakRssMb,
      notes:
        `no peer (the budget is 50 ms); each round's longest delay (monitorEventLoopDelay in the child), ` +
        `median of ${rounds} (${Math.min(...delays).toFixed(1)}–${Math.max(...delays).toFixed(1)} ms); ` +
        `peak RSS is the child's maxRSS, ${baselineRssMb.toFixed(0)} MB of it Node with the module loaded`,
    },
  ]
}

function copyOf(round: Round): string {
  return path.join(round.dir, 'copy.db')
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
