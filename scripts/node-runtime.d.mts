// Types of node-runtime.mjs, for the TypeScript that starts Node processes (cli/stack, tests, bench).
export declare const PINNED_NODE: Readonly<Record<'22' | '24', string>>;
export declare const DEFAULT_LINE: '24';
export declare function stripsTypes(): boolean;
export declare function nodePath(line: string): string;
export declare function ensureNode(line: string, log?: (line: string) => void): string;
export declare function typeScriptNode(log?: (line: string) => void): string;
export declare function typeScriptNodeOrExit(): string;
