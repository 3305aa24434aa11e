/**
 * Regular expressions that users write (redaction `patterns`, docs/personal-data.md): the one place that
 * decides which of them callpipe accepts and how they run. They run on RE2 (the `re2js` package, a pure
 * JavaScript port), whose matching time grows linearly with the text and the pattern: a pattern such as
 * `(a+)+$` that sends a backtracking engine (JavaScript's own) into exponential time over a long run of
 * `a` is as cheap as any other here. What RE2 cannot run in linear time, backreferences and lookaround,
 * it does not run at all: such a pattern is refused when the rules are loaded, with the reason.
 *
 * Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), with JavaScript's `\uXXXX` and `\u{X…}`
 * escapes accepted too. Our own fixed patterns (the built-in detectors) stay on JavaScript's engine:
 * they are written and tested here, with no nested repetition over a shared character.
 */
import { RE2JS, RE2JSException } from 're2js';
import { z } from 'zod';

/**
 * Bounds of one pattern. `programSize` is RE2's measure of a compiled pattern: matching time per
 * character grows with it (`\d{1000}\D` is about 1,000), so it is capped below what one call's text
 * could make slow.
 */
export const USER_PATTERN_LIMITS = { length: 500, programSize: 1000 } as const;

/**
 * Wall-clock bound of the deployment's terms and patterns over one call's text (the redaction step):
 * checked between patterns, below the text activities' 30-s heartbeat timeout. Beyond it the step fails
 * with the reason and the call stores no text.
 */
const USER_RULES_SECONDS_PER_CALL = 20;

class UserPatternError extends Error {
  override name = 'UserPatternError';
}

/** One match: where it starts in the text and its length, UTF-16 units (as String indices). */
interface PatternMatch {
  index: number;
  length: number;
}

export interface UserPattern {
  readonly source: string;
  /** Every match in `text`, left to right, non-overlapping (empty matches included). */
  matches(text: string): Generator<PatternMatch>;
  /** Whether `text` holds a match. */
  test(text: string): boolean;
}

/** How a pattern runs: `caseInsensitive` folds case as RE2's `(?i)` does. */
interface UserPatternOptions {
  caseInsensitive?: boolean;
}

/** `\uXXXX` and `\u{X…}` as RE2 writes them (`\x{…}`); an escaped backslash is left as it is. */
function fromJavaScriptEscapes(source: string): string {
  return source.replace(
    /\\\\|\\u\{([0-9A-Fa-f]{1,6})\}|\\u([0-9A-Fa-f]{4})/g,
    (m, braced?: string, four?: string) => (m === '\\\\' ? m : `\\x{${braced ?? four}}`),
  );
}

/** Why RE2 refused a pattern, in words a user can act on. */
function refusal(source: string, err: RE2JSException): string {
  if (/\(\?<?[=!]/.test(source))
    return 'uses lookahead or lookbehind ((?=, (?!, (?<=, (?<!), which callpipe does not run';
  if (/\\[1-9]|\\k</.test(source))
    return 'uses a backreference (\\1, \\k<name>), which needs a backtracking engine: callpipe does not run it';
  return `is not a regular expression callpipe can run (RE2 syntax): ${err.message.replace(/^error parsing regexp: /, '')}`;
}

function compiled(source: string, options: UserPatternOptions = {}): RE2JS {
  if (source.length > USER_PATTERN_LIMITS.length)
    throw new UserPatternError(`is ${source.length} characters long, at most ${USER_PATTERN_LIMITS.length}`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(fromJavaScriptEscapes(source), options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    if (err instanceof RE2JSException) throw new UserPatternError(refusal(source, err));
    throw err;
  }
  const size = re.programSize();
  if (size > USER_PATTERN_LIMITS.programSize)
    throw new UserPatternError(
      `is too large for one pattern (RE2 program size ${size}, at most ${USER_PATTERN_LIMITS.programSize}): split it or bound its repetitions`,
    );
  return re;
}

/** Why `source` is refused, or undefined when callpipe runs it. */
export function userPatternProblem(source: string): string | undefined {
  try {
    compiled(source);
    return undefined;
  } catch (err) {
    if (err instanceof UserPatternError) return err.message;
    throw err;
  }
}

/** A user's pattern in a file callpipe validates (redaction patterns, rule patterns): refused with the reason. */
export const userPatternSchema = z
  .string()
  .min(1)
  .max(USER_PATTERN_LIMITS.length)
  .superRefine((source, ctx) => {
    // Run on RE2, in linear time: what it cannot run is refused when the file is read.
    const problem = userPatternProblem(source);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Compiles a user's pattern; a {@link UserPatternError} says why it is refused. */
export function compileUserPattern(source: string, options: UserPatternOptions = {}): UserPattern {
  const re = compiled(source, options);
  return {
    source,
    *matches(text: string) {
      const m = re.matcher(text);
      while (m.find()) yield { index: m.start(), length: m.end() - m.start() };
    },
    test: (text: string) => re.matcher(text).find(),
  };
}

/** A deadline over one call's work: `check()` throws {@link UserRulesTimeExceeded} once it has passed. */
export class UserRulesTimeExceeded extends Error {
  override name = 'UserRulesTimeExceeded';
}

export function userRulesDeadline(
  seconds: number = USER_RULES_SECONDS_PER_CALL,
  now: () => number = Date.now,
): { check(): void; seconds: number } {
  const end = now() + seconds * 1000;
  return {
    seconds,
    check() {
      if (now() >= end)
        throw new UserRulesTimeExceeded(
          `the deployment's redaction terms and patterns did not finish within ${seconds} s on this call's text`,
        );
    },
  };
}
