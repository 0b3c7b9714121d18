// `npm run check:readme [-- [--port N] [--keep] [file.md …]]`: runs every shell block of README.md
// and then of each page of docs/ (or of the files given), in order, in one bash, against a fresh
// `npm run dev`, and fails on the first block that fails or prints other than what its file says it
// prints. The docs pages come after README.md because their blocks go on from its walkthrough
// (`$BASE`, `$API_KEY`, `$SESSION_ID`, the `json` helper).
//
// The server: `npm run dev -- --port N --ip 127.0.0.1 --persist-to <fresh temporary folder>` (port
// 8795 by default, never 8787, which a developer's own `npm run dev` holds; a port already taken
// stops the check at once), started exactly as a newcomer starts it: no extra `--var`, so it reads
// .dev.vars (made from .dev.vars.example when missing). The check waits up to 180 s for GET /health,
// and at the end (success, failure or Ctrl-C) stops the server's whole process group and removes the
// folder, unless --keep.
//
// The blocks, in file order (scripts/readme-blocks.ts parses them):
// - Every fenced block whose info string is `sh` is run, except one preceded (blank lines allowed)
//   by the line `<!-- check-readme: skip -->`, for blocks such as `npm install && npm run dev` that
//   the check itself stands for.
// - Its expected output is the next fenced block if that one's info string is `text` and no heading
//   comes between (prose may). Its stdout, trailing whitespace trimmed from each line and trailing
//   empty lines dropped, must equal that block's lines. In an expected line, `…` (U+2026) matches any
//   run of characters within the line; a line that is exactly `…` matches zero or more whole lines;
//   everything else is literal. Stderr is not compared.
// - A block without expected output must succeed; its output is shown only when it fails.
//
// How they run: one `bash --noprofile --norc` for all blocks, so the variables and functions one
// block defines serve the next, as in a newcomer's terminal. Its working directory is the repository
// root; its environment is this one with `BASE=http://localhost:<port>` exported, every
// `node_modules/.bin` removed from PATH and npm's `npm_*` and INIT_CWD variables removed, so blocks
// run on the system Node as a newcomer's would (`npx …` still finds the project's binaries). Each block
// is sourced with `set -o pipefail` and an ERR trap, stdin from /dev/null: any failing command in it
// (a pipeline fails if any part does) fails the block, which still runs to its end, as pasted text
// would. A block that exits the shell, has a syntax error or runs longer than 180 s fails. Processes
// a block starts in the background write to that block's output files and are killed at the end
// with bash's whole process group.
//
// The report: one line per block (`ok`, `skip` or `FAIL`, its number, file:line, its first line,
// seconds taken). On the first failure: the block's source, its stdout against the expected output
// (a line diff), its stderr and the last 40 lines of the server's output; then the check stops, since
// later blocks depend on earlier ones. Exit status: 0 all blocks passed, 1 a block failed or the
// server did not start, 2 bad usage or the port is taken.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative, resolve } from "node:path";
import {
  type NpmScript,
  portIsFree,
  REPOSITORY_ROOT,
  startDevServer,
  stopGroup,
  waitFor,
} from "./dev-server.ts";
import { diffOutput, normalizeOutput, parseShellBlocks, type ShellBlock } from "./readme-blocks.ts";

const DEFAULT_PORT = 8795;
const BLOCK_TIMEOUT_MS = 180_000;
const SERVER_LOG_LINES = 40;

const USAGE = "usage: npm run check:readme [-- [--port N] [--keep] [file.md …]]";

interface Options {
  port: number;
  keep: boolean;
  /** The files whose blocks run, in this order. */
  files: string[];
}

/** README.md, then every page of docs/ by name: the files checked when none is given. */
function defaultFiles(): string[] {
  const pages = readdirSync(join(REPOSITORY_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join("docs", name));
  return ["README.md", ...pages];
}

function parseArguments(args: string[]): Options {
  const options: Options = { port: DEFAULT_PORT, keep: false, files: [] };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? "";
    if (arg === "--keep") options.keep = true;
    else if (arg === "--port" || arg.startsWith("--port=")) {
      const value = arg === "--port" ? args[++index] : arg.slice("--port=".length);
      const port = Number(value);
      if (!Number.isInteger(port) || port < 1 || port > 65535)
        fail(`--port wants a port number, not ${value}`);
      options.port = port;
    } else if (arg === "--help" || arg === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (arg.startsWith("-")) fail(`unexpected argument ${arg}`);
    else options.files.push(arg);
  }
  if (options.files.length === 0) options.files = defaultFiles();
  return options;
}

function fail(message: string): never {
  console.error(`check:readme: ${message}\n${USAGE}`);
  process.exit(2);
}

/** The environment of the blocks' shell (see the header): a newcomer's terminal, plus BASE. */
function blockEnvironment(port: number): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^npm_/i.test(name) || name === "INIT_CWD") delete env[name];
  }
  env.PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((entry) => !/node_modules[\\/]\.bin[\\/]?$/.test(entry))
    .join(delimiter);
  env.BASE = `http://localhost:${port}`;
  return env;
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** What came of one block: bash's report after it, or the reason there was none. */
type BlockEnd =
  | { kind: "done"; status: number; line: number; command: string }
  | { kind: "shell-exited"; code: number | null; signal: string | null }
  | { kind: "timeout" };

/** The one bash all blocks run in, fed one wrapper command per block on its stdin. */
class BlockShell {
  readonly child: ChildProcess;
  private readonly marker = `@@check-readme-${randomBytes(6).toString("hex")}`;
  private buffered = "";
  private stderr = "";
  private waiting: ((end: BlockEnd) => void) | null = null;
  private exited: BlockEnd | null = null;
  /** Where the wrapper leaves the failing command's text (it may span lines, so not on the marker line). */
  private readonly commandFile: string;

  constructor(env: NodeJS.ProcessEnv, folder: string) {
    this.commandFile = join(folder, "command");
    // Its own process group, so that the end of the check can kill what the blocks left running.
    this.child = spawn("bash", ["--noprofile", "--norc"], {
      cwd: REPOSITORY_ROOT,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.child.stdin?.on("error", () => {});
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.buffered += chunk.toString();
      let newline = this.buffered.indexOf("\n");
      while (newline >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        newline = this.buffered.indexOf("\n");
        const [marker, status, lineNumber] = line.split(" ");
        if (marker !== this.marker) continue;
        const command = readFileSync(this.commandFile, "utf8").replace(/\n$/, "");
        this.settle({ kind: "done", status: Number(status), line: Number(lineNumber), command });
      }
    });
    this.child.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.on("exit", (code, signal) => {
      this.exited = { kind: "shell-exited", code, signal };
      this.settle(this.exited);
    });
  }

  private settle(end: BlockEnd) {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(end);
  }

  /** What bash itself printed on stderr (outside any block's redirection). */
  shellErrors(): string {
    return this.stderr;
  }

  /**
   * Sources `script` (a file) with pipefail and an ERR trap that records the first failing command,
   * its status and its line in the file; its stdout and stderr go to the files `stdout` and `stderr`.
   */
  run(script: string, stdout: string, stderr: string): Promise<BlockEnd> {
    if (this.exited) return Promise.resolve(this.exited);
    const wrapper = [
      "__check_status=0; __check_line=0; __check_command=",
      "set -o pipefail",
      `trap '__check_status=$?; __check_line=$LINENO; __check_command=$BASH_COMMAND; trap - ERR' ERR`,
      `source ${shellQuote(script)} > ${shellQuote(stdout)} 2> ${shellQuote(stderr)} < /dev/null`,
      "trap - ERR",
      `printf '%s\\n' "$__check_command" > ${shellQuote(this.commandFile)}`,
      `printf '%s %s %s\\n' ${this.marker} "$__check_status" "$__check_line"`,
    ].join("\n");
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle({ kind: "timeout" }), BLOCK_TIMEOUT_MS);
      this.waiting = (end) => {
        clearTimeout(timer);
        resolve(end);
      };
      this.child.stdin?.write(`${wrapper}\n`);
    });
  }
}

const elapsed = (start: number) => `${((Date.now() - start) / 1000).toFixed(1)} s`;
const tail = (text: string, count: number) => text.replace(/\n$/, "").split("\n").slice(-count).join("\n");
const indent = (text: string, prefix = "    ") =>
  text === "" ? `${prefix}(nothing)` : text.replace(/\n$/, "").replace(/^/gm, prefix);

/** Prints what a failing block did, for the report. */
function explain(
  block: ShellBlock,
  where: string,
  end: BlockEnd,
  stdout: string,
  stderr: string,
  shell: BlockShell,
  server: NpmScript,
) {
  const [file] = where.split(":");
  const source = block.source
    .replace(/\n$/, "")
    .split("\n")
    .map((text, index) => `${String(block.line + 1 + index).padStart(6)}  ${text}`)
    .join("\n");
  console.log(`\nThe block (${where}):\n${source}\n`);
  if (end.kind === "timeout") console.log(`It did not finish within ${BLOCK_TIMEOUT_MS / 1000} s.`);
  else if (end.kind === "shell-exited") {
    console.log(
      `It ended the shell (${end.signal ? `signal ${end.signal}` : `exit status ${end.code}`}): a block must not \`exit\`.`,
    );
  } else if (end.status !== 0) {
    // BASH_COMMAND is the failing simple command (of a pipeline, the last part); its line, in the block.
    const insideBlock = !end.command.startsWith("source ");
    const text = block.source.split("\n")[end.line - 1]?.trim() ?? "";
    console.log(
      insideBlock
        ? `A command failed (status ${end.status}) at ${file}:${block.line + end.line}: ${text} (bash: ${end.command})`
        : `The block failed (status ${end.status}): a syntax error or a \`return\` (see its stderr).`,
    );
  }
  if (block.expected !== null && end.kind === "done") {
    const diff = diffOutput(block.expected, normalizeOutput(stdout));
    if (!diff.matches) {
      console.log(
        `\nIts stdout against the expected output (${file}:${block.expectedLine}); - expected, not printed; + printed, not expected:`,
      );
      for (const line of diff.lines) console.log(`  ${line.op} ${line.text}`);
    } else console.log("\nIts stdout is as expected.");
  } else console.log(`\nIts stdout:\n${indent(stdout)}`);
  console.log(`\nIts stderr:\n${indent(stderr)}`);
  if (shell.shellErrors() !== "") console.log(`\nThe shell's own stderr:\n${indent(shell.shellErrors())}`);
  console.log(
    `\nThe last ${SERVER_LOG_LINES} lines of npm run dev:\n${indent(tail(server.output(), SERVER_LOG_LINES))}`,
  );
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  const blocks: (ShellBlock & { label: string })[] = [];
  for (const file of options.files) {
    const path = resolve(file);
    let markdown: string;
    try {
      markdown = readFileSync(path, "utf8");
    } catch (error) {
      fail(`cannot read ${file}: ${(error as Error).message}`);
    }
    const label = relative(REPOSITORY_ROOT, path).startsWith("..") ? path : relative(REPOSITORY_ROOT, path);
    for (const block of parseShellBlocks(markdown)) blocks.push({ ...block, label });
  }
  const labels = [...new Set(blocks.map((block) => block.label))];
  if (!(await portIsFree(options.port))) {
    fail(
      `port ${options.port} is taken (another npm run dev?); stop what holds it or choose another with -- --port N`,
    );
  }

  const started = Date.now();
  const folder = mkdtempSync(join(tmpdir(), "check-readme-"));
  const state = join(folder, "state");
  const scripts = join(folder, "blocks");
  mkdirSync(scripts);
  let server: NpmScript | null = null;
  let shell: BlockShell | null = null;
  // Ctrl-C or a kill: stop both process groups at once and remove the folder, then leave.
  const abort = (signal: NodeJS.Signals) => {
    for (const child of [shell?.child, server?.child]) {
      if (child?.pid) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }
    }
    if (!options.keep) rmSync(folder, { recursive: true, force: true });
    console.error(`\ncheck:readme: stopped by ${signal}`);
    process.exit(130);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, abort);

  try {
    console.log(
      `check:readme: ${blocks.length} sh block(s) of ${labels.join(", ")}; npm run dev on port ${options.port}`,
    );
    server = startDevServer(options.port, state);
    try {
      await waitFor("npm run dev", `http://127.0.0.1:${options.port}/health`, server.child, server.output);
    } catch (error) {
      console.log(`FAIL npm run dev: ${(error as Error).message}`);
      return 1;
    }
    console.log(`npm run dev answers on port ${options.port} (${elapsed(started)})`);

    shell = new BlockShell(blockEnvironment(options.port), folder);
    let passed = 0;
    for (const [index, block] of blocks.entries()) {
      const number = index + 1;
      const where = `${block.label}:${block.line}`;
      const firstLine = block.source.split("\n")[0] ?? "";
      const heading = `${String(number).padEnd(3)} ${where}  ${firstLine}`;
      if (block.skip) {
        console.log(`skip ${heading}`);
        continue;
      }
      const script = join(scripts, `${number}.sh`);
      const stdoutFile = join(scripts, `${number}.stdout`);
      const stderrFile = join(scripts, `${number}.stderr`);
      writeFileSync(script, block.source);
      const blockStarted = Date.now();
      const end = await shell.run(script, stdoutFile, stderrFile);
      const read = (file: string) => {
        try {
          return readFileSync(file, "utf8");
        } catch {
          return "";
        }
      };
      const stdout = read(stdoutFile);
      const stderr = read(stderrFile);
      const ok =
        end.kind === "done" &&
        end.status === 0 &&
        (block.expected === null || diffOutput(block.expected, normalizeOutput(stdout)).matches);
      console.log(`${ok ? "ok  " : "FAIL"} ${heading}  (${elapsed(blockStarted)})`);
      if (!ok) {
        explain(block, where, end, stdout, stderr, shell, server);
        return 1;
      }
      passed++;
    }
    console.log(`${passed} blocks ok in ${elapsed(started)}`);
    return 0;
  } finally {
    if (shell) await stopGroup(shell.child, 1_000);
    if (server) await stopGroup(server.child);
    if (options.keep)
      console.log(`kept ${folder} (state/: the server's local state, blocks/: each block and its output)`);
    else rmSync(folder, { recursive: true, force: true });
  }
}

process.exit(await main());
