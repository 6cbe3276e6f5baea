/**
 * The docs tier (`npm run test:docs`): the docs as a newcomer follows them, literally.
 *
 * - docs/getting-started.md, then the README: every ```sh / ```bash / ```shell block is run, in
 *   the order of the page, in one bash with `set -e`, starting in a new temporary folder (the
 *   README's in the clone getting-started.md made, which it says it runs in). A program block
 *   (```js, ```ts, ```json, ```c, …) is written, at that point of the script, to the file that the
 *   prose just before it names ("Save this as `first-lapi.mjs`", or a code span naming the file),
 *   and every program so written must be run by a later command. A ```text block after a command
 *   shows what it prints: each of its lines must be a line of that step's output (in any order;
 *   decimal figures and `…` match anything). A block is skipped only where the page says so in an
 *   HTML comment just before it, which the reader does not see: `<!-- not run: why -->`, or
 *   `<!-- run: node>=22.18 -->` for a step that needs that Node.
 *   The one placeholder, `git clone <URL of the amlapi repository> amlapi`, clones instead a
 *   git repository of this checkout's files as they are (committed or not), made in the temporary
 *   folder. npm reaches the registry only for what its cache lacks (`prefer-offline`).
 *   Each step has a deadline; at the end no process started in the folder may be left, and the
 *   folder is removed.
 * - Every page: internal links resolve to a file, and `#anchor`s to a heading of it; nothing links
 *   into `../shared/` or names a path of the machine the docs were written on; npx is always
 *   `npx --no -- …` in code; the packages are four.
 *
 * Needs the build (`npm run build`), npm and git on PATH.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { childEnv, killAll, runIn } from '../helpers/npm-project.js'

const ROOT = realpathSync(fileURLToPath(new URL('../..', import.meta.url)))

// ---------------------------------------------------------------------------------------------
// Markdown

interface Block {
  /** The fence's language (lower case; '' for none). */
  lang: string
  body: string
  /** 1-based line of the opening fence. */
  line: number
  /** The prose between the previous block (or the start) and this one. */
  before: string
  /** The HTML comments just before the block (only blank lines between). */
  marks: string[]
}

/** The fenced blocks of a markdown text, in order. */
function blocks(text: string): Block[] {
  const out: Block[] = []
  const lines = text.split('\n')
  let prose: string[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]!)
    if (open === null) {
      prose.push(lines[i]!)
      continue
    }
    const fence = open[2]!
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) body.push(lines[j++]!)
    const marks: string[] = []
    for (let k = prose.length - 1; k >= 0; k--) {
      const l = prose[k]!.trim()
      if (l === '') continue
      const m = /^<!--\s*(.*?)\s*-->$/.exec(l)
      if (m === null) break
      marks.unshift(m[1]!)
    }
    out.push({ lang: open[3]!.toLowerCase(), body: body.join('\n'), line: i + 1, before: prose.join('\n'), marks })
    prose = []
    i = j
  }
  return out
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a markdown file's headings (GitHub numbers repeats: x, x-1, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let inFence = false
  for (const l of text.split('\n')) {
    if (/^\s*(`{3,}|~{3,})/.test(l)) inFence = !inFence
    if (inFence) continue
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)
    if (m === null) continue
    const s = slug(m[1]!)
    const n = seen.get(s) ?? 0
    seen.set(s, n + 1)
    out.add(n === 0 ? s : `${s}-${n}`)
  }
  return out
}

/** Text without its fenced blocks (so that links and code spans are those of the prose). */
function prose(text: string): string {
  return text.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\s*\2[^\n]*$/gm, '')
}

/** The markdown files of the docs: README, docs/, each package's README, the examples' READMEs. */
function docFiles(): string[] {
  const out = ['README.md', 'CHANGELOG.md']
  for (const f of readdirSync(join(ROOT, 'docs'))) if (f.endsWith('.md')) out.push(join('docs', f))
  for (const p of readdirSync(join(ROOT, 'packages'))) if (existsSync(join(ROOT, 'packages', p, 'README.md'))) out.push(join('packages', p, 'README.md'))
  for (const f of readdirSync(join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' })) {
    if (basename(f) === 'README.md' && !f.includes('node_modules')) out.push(join('examples', f))
  }
  return out.filter((f) => existsSync(join(ROOT, f)))
}

// ---------------------------------------------------------------------------------------------
// The script made of a page

interface Step {
  /** Where in the page (file:line). */
  at: string
  /** The shell text run. */
  sh: string
  /** What its output must contain (the ```text blocks after it). */
  expect: string[][]
  deadlineMs: number
}

interface Script {
  steps: Step[]
  written: Array<{ name: string; at: string }>
  skipped: string[]
}

const PROGRAM_LANGS = new Set(['js', 'javascript', 'mjs', 'ts', 'typescript', 'mts', 'json', 'c', 'jsonc'])
const SHELL_LANGS = new Set(['sh', 'bash', 'shell'])
const FILE_RE = /`([\w./-]+\.(?:mjs|cjs|js|mts|ts|json|c|h))`/

/** Whether a `run: node>=X.Y` mark lets this Node run the step. */
function nodeAllows(mark: string): boolean {
  const m = /^run:\s*node\s*>=\s*(\d+)(?:\.(\d+))?/.exec(mark)
  if (m === null) return true
  const [maj, min] = process.versions.node.split('.').map(Number) as [number, number]
  const wantMaj = Number(m[1])
  const wantMin = Number(m[2] ?? 0)
  return maj > wantMaj || (maj === wantMaj && min >= wantMin)
}

/** The deadline of a step: long for npm's installs and the build, short for a program. */
function deadlineOf(sh: string): number {
  if (/\bnpm (ci|install|i|run build|pack)\b|\bgit clone\b/.test(sh)) return 240_000
  return 60_000
}

function scriptOf(file: string, text: string, clone: string): Script {
  const steps: Step[] = []
  const written: Script['written'] = []
  const skipped: string[] = []
  /** Whether the last command block ran (a text block after a skipped one is skipped too). */
  let lastRan = false
  for (const b of blocks(text)) {
    const at = `${file}:${b.line}`
    const notRun = b.marks.find((m) => /^not run\b/.test(m))
    const allowed = b.marks.every(nodeAllows)
    if (b.lang === 'text' || b.lang === 'console' || b.lang === 'output') {
      if (notRun !== undefined || !allowed || !lastRan || /^not compared\b/.test(b.marks.join(' '))) continue
      steps[steps.length - 1]!.expect.push(
        b.body
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l !== ''),
      )
      continue
    }
    if (notRun !== undefined || !allowed) {
      skipped.push(`${at} (${notRun ?? b.marks.join(', ')})`)
      if (SHELL_LANGS.has(b.lang)) lastRan = false
      continue
    }
    if (SHELL_LANGS.has(b.lang)) {
      const sh = b.body.replace(/^git clone <[^>\n]+>/m, `git clone ${JSON.stringify(clone)}`)
      steps.push({ at, sh, expect: [], deadlineMs: deadlineOf(sh) })
      lastRan = true
    } else if (PROGRAM_LANGS.has(b.lang)) {
      const para =
        b.before
          .split(/\n\s*\n/)
          .filter((p) => p.trim() !== '' && !/^\s*<!--/.test(p))
          .pop() ?? ''
      const name = (/Save (?:this|it) as `([^`]+)`/.exec(para) ?? FILE_RE.exec(para))?.[1]
      if (name === undefined)
        throw new Error(`${at}: a ${b.lang} block, but the paragraph before it names no file to save it as (or mark it <!-- not run: … -->)`)
      const eof = 'AMLAPI_DOCS_EOF'
      if (b.body.includes(eof)) throw new Error(`${at}: the block holds ${eof}`)
      steps.push({
        at,
        sh: `mkdir -p ${JSON.stringify(dirname(name))} && cat > ${JSON.stringify(name)} <<'${eof}'\n${b.body}\n${eof}`,
        expect: [],
        deadlineMs: 10_000,
      })
      written.push({ name, at })
      lastRan = false
    } else if (b.lang !== '') {
      throw new Error(
        `${at}: a block of '${b.lang}', which the docs tier neither runs nor writes: use sh, a program language or text, or mark it <!-- not run: … -->`,
      )
    } else {
      throw new Error(`${at}: a block without a language: say sh, text, or the program's language`)
    }
  }
  return { steps, written, skipped }
}

const MARK = '@@amlapi-docs-step'

interface StepResult {
  step: Step
  out: string
  ms: number
}

/**
 * Runs a page's steps in one bash (`set -e`, stderr into stdout) in `cwd`, each behind a marker
 * line, watching each step's deadline; resolves with each step's output.
 */
async function runScript(script: Script, cwd: string, tmp: string, env: NodeJS.ProcessEnv): Promise<StepResult[]> {
  const text =
    ['set -e', 'exec 2>&1', ...script.steps.flatMap((s, i) => [`printf '\\n${MARK} %s\\n' ${i}`, s.sh]), `printf '\\n${MARK} end\\n'`].join('\n') + '\n'
  const file = join(tmp, `.docs-script-${process.pid}-${Date.now()}.sh`)
  writeFileSync(file, text)
  let output = ''
  let current = -1
  let startedAt = performance.now()
  const starts: number[] = []
  const total = script.steps.reduce((a, s) => a + s.deadlineMs, 5_000)
  let late: string | null = null
  const p = runIn(ROOT, 'bash', [file], cwd, total, {
    env,
    onData: (d) => {
      output += d
      for (const m of d.matchAll(new RegExp(`${MARK} (\\d+|end)`, 'g'))) {
        current = m[1] === 'end' ? script.steps.length : Number(m[1])
        startedAt = performance.now()
        starts[current] = startedAt
      }
    },
  })
  const watch = setInterval(() => {
    const s = script.steps[current]
    if (s !== undefined && performance.now() - startedAt > s.deadlineMs && late === null) {
      late = `${s.at}: the step passed its deadline of ${s.deadlineMs / 1000} s:\n${s.sh}`
      killAll()
    }
  }, 250)
  let r: Awaited<typeof p>
  try {
    r = await p
  } finally {
    clearInterval(watch)
  }
  rmSync(file, { force: true })
  const parts = output.split(new RegExp(`\\n?${MARK} (?:\\d+|end)\\n`))
  const results = script.steps.map((step, i) => ({ step, out: parts[i + 1] ?? '', ms: (starts[i + 1] ?? performance.now()) - (starts[i] ?? 0) }))
  if (late !== null) throw new Error(`${late}\n--- its output so far\n${parts[current + 1] ?? ''}`)
  if (r.code !== 0) {
    const failed = script.steps[Math.max(0, Math.min(current, script.steps.length - 1))]!
    throw new Error(`${failed.at}: the step failed (exit ${r.code ?? r.signal}):\n${failed.sh}\n--- its output\n${parts[current + 1] ?? ''}`)
  }
  return results
}

/** Whether `line` of the docs matches a line of output: decimals and `…` match anything. */
function lineMatcher(line: string): RegExp {
  const esc = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp('^' + esc.replace(/\\\.\\\.\\\.|…/g, '.*').replace(/\d+\\\.\d+/g, '\\d+(?:\\.\\d+)?') + '$')
}

/** Processes whose working folder or command line is inside `dir`. */
function processesIn(dir: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`)
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
      if (cwd.startsWith(dir) || cmd.includes(dir)) found.push(`${pid}: ${cmd.trim()} (in ${cwd})`)
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found
}

// ---------------------------------------------------------------------------------------------

describe('every page', () => {
  const files = docFiles()

  it('links only to files and headings that exist, never into shared/ or this machine', () => {
    const bad: string[] = []
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      if (/\/work\/|\.\.\/shared\//.test(text)) bad.push(`${f}: names a path of this machine or shared/`)
      for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]!
        if (/^(https?:|mailto:)/.test(target)) continue
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const abs = path === '' ? join(ROOT, f) : resolve(dirname(join(ROOT, f)), decodeURI(path))
        if (!abs.startsWith(ROOT)) {
          bad.push(`${f}: ${target} leaves the repository`)
          continue
        }
        if (!existsSync(abs)) {
          bad.push(`${f}: ${target}: no such file`)
          continue
        }
        if (anchor !== undefined && anchor !== '') {
          if (!abs.endsWith('.md') || statSync(abs).isDirectory()) continue
          if (!anchors(readFileSync(abs, 'utf8')).has(anchor)) bad.push(`${f}: ${target}: no heading '#${anchor}' in ${relative(ROOT, abs)}`)
        }
      }
    }
    expect(bad).toEqual([])
  })

  it('write npx only as npx --no -- … in commands, and never let it look for lapirun otherwise', () => {
    const bad: string[] = []
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      const code = [
        ...blocks(text)
          .filter((b) => b.lang !== 'text')
          .map((b) => b.body),
        ...[...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!),
      ]
      for (const c of code) {
        // (npx's own messages, such as 'npx canceled due to missing packages', are not commands)
        for (const m of c.matchAll(/\bnpx\b(?!\s+--no\s+--\s)(?!\s+canceled\b)(.{0,40})/g)) {
          if (m[1]!.trim() === '' && c.trim() === 'npx') continue // the word alone, in prose
          bad.push(`${f}: ${c.trim().slice(0, 120)}`)
        }
      }
      if (/npx lapirun/.test(text)) bad.push(`${f}: says 'npx lapirun'`)
    }
    expect(bad).toEqual([])
  })

  it('count four packages', () => {
    const bad: string[] = []
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/\b(two|three|2|3) (packages|tarballs|workspaces)\b/gi)) bad.push(`${f}: '${m[0]}'`)
    }
    expect(bad).toEqual([])
    for (const f of ['README.md', join('docs', 'getting-started.md')]) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const p of ['@amlapi/bufmgr', '@amlapi/lapi', '@amlapi/am2', '@amlapi/pgas']) expect(text, `${f} names ${p}`).toContain(p)
    }
  })
})

describe('getting-started.md and the README, literally', () => {
  let tmp = ''
  let source = ''
  const env = (): NodeJS.ProcessEnv => ({
    ...childEnv(ROOT),
    npm_config_prefer_offline: 'true',
    npm_config_update_notifier: 'false',
    // (the reader's own git identity is not needed: nothing here commits)
  })

  beforeAll(() => {
    for (const w of ['bufmgr', 'lapi', 'am2', 'pgas']) {
      if (!existsSync(join(ROOT, 'packages', w, 'lib', 'index.js'))) throw new Error(`packages/${w}/lib is missing: build first (npm run build)`)
    }
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'amlapi-docs-')))
    // the repository to clone: this checkout's files as they are (tracked, and untracked but not
    // ignored), committed in a repository of their own
    source = join(tmp, '.source')
    mkdirSync(source)
    const ls = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 })
    if (ls.status !== 0) throw new Error(`git ls-files: ${ls.stderr}`)
    for (const f of ls.stdout.split('\0').filter((x) => x !== '' && existsSync(join(ROOT, x)))) {
      mkdirSync(dirname(join(source, f)), { recursive: true })
      cpSync(join(ROOT, f), join(source, f))
    }
    const git = (...args: string[]): void => {
      const r = spawnSync(
        'git',
        ['-c', 'user.name=docs tier', '-c', 'user.email=docs@localhost', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args],
        { cwd: source, encoding: 'utf8', timeout: 60_000 },
      )
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
    }
    git('init', '-q')
    git('add', '-A')
    git('commit', '-q', '-m', 'the checkout, for the docs tier')
  }, 120_000)

  afterAll(() => {
    killAll()
    if (tmp !== '') {
      const left = processesIn(tmp)
      for (const l of left) {
        try {
          process.kill(Number(l.split(':')[0]), 'SIGKILL')
        } catch {
          /* gone */
        }
      }
      rmSync(tmp, { recursive: true, force: true })
      expect(left, 'processes left behind in the docs folder').toEqual([])
    }
  })

  /** Runs `file`'s script in `cwd` and checks its outputs and the programs it wrote. */
  async function follow(file: string, cwd: string): Promise<void> {
    const script = scriptOf(file, readFileSync(join(ROOT, file), 'utf8'), source)
    expect(script.steps.length, `${file} has commands`).toBeGreaterThan(0)
    const t0 = performance.now()
    const results = await runScript(script, cwd, tmp, env())
    const problems: string[] = []
    let compared = 0
    for (const { step, out } of results) {
      const got = out.split('\n').map((l) => l.trim())
      for (const shown of step.expect) {
        for (const line of shown) {
          const re = lineMatcher(line)
          compared++
          if (!got.some((g) => re.test(g))) problems.push(`${step.at}: the page shows '${line}', which the command did not print`)
        }
      }
      if (/npm warn install-scripts/.test(out)) problems.push(`${step.at}: npm warned about install scripts:\n${out}`)
    }
    // every program written is run by a later command (by its name without the extension, as a
    // compiled hello.ts runs as dist/hello.js)
    for (const w of script.written) {
      if (/\.json$/.test(w.name)) continue
      const stem = basename(w.name).replace(/\.[^.]+$/, '')
      const i = script.steps.findIndex((s) => s.at === w.at)
      if (!script.steps.slice(i + 1).some((s) => s.sh.includes(stem))) problems.push(`${w.at}: ${w.name} is written but no command after it runs it`)
    }
    expect(problems).toEqual([])
    process.stdout.write(
      `docs tier: ${file}: ${script.steps.length} steps (${script.written.length} files written, ${compared} lines of output compared) in ${((performance.now() - t0) / 1000).toFixed(1)} s; skipped: ${script.skipped.join('; ') || 'none'}\n`,
    )
    for (const r of results) process.stdout.write(`  ${r.step.at} ${(r.ms / 1000).toFixed(1)} s\n`)
    const left = processesIn(tmp)
    expect(left, `${file}: processes left running`).toEqual([])
  }

  it('docs/getting-started.md: every command, in order, in a new folder', async () => {
    await follow(join('docs', 'getting-started.md'), tmp)
  }, 900_000)

  it('README.md: every command, in order, in the clone getting-started.md made', async () => {
    const clone = join(tmp, 'amlapi')
    if (!existsSync(join(clone, 'packages', 'lapi', 'lib', 'index.js')))
      throw new Error('the clone of getting-started.md is not there, or not built (see the test before)')
    await follow('README.md', clone)
  }, 300_000)
})
