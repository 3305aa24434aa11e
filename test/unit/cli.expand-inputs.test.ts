import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandInputs } from '../../cli/submit.ts';
import { makeTempDir, writeWav } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir('callpipe-expand-');
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);

describe('expandInputs (callpipe process)', () => {
  it('takes the recordings of a directory by name or content and says why it skips the rest', async () => {
    mkdirSync(at('calls/sub'), { recursive: true });
    writeWav(at('calls/a.wav'), { dataBytes: 800 });
    writeWav(at('calls/sub/no-extension'), { dataBytes: 800 });
    writeFileSync(at('calls/b.g722'), Buffer.alloc(800, 0x5a)); // headerless: its extension says it all
    writeFileSync(at('calls/notes.txt'), 'Call back on Monday.\nAsk for the invoice number.\n');
    writeFileSync(at('calls/raw-without-name'), Buffer.alloc(800, 0xff));
    const { inputs, skipped } = await expandInputs([at('calls'), 's3://bucket/key.wav', at('named.txt')]);
    expect(inputs).toEqual([
      at('calls/a.wav'),
      at('calls/b.g722'),
      at('calls/sub/no-extension'),
      's3://bucket/key.wav',
      at('named.txt'),
    ]);
    expect(skipped).toEqual([
      { path: at('calls/notes.txt'), reason: "not a recording: text (extension 'txt', checked by content)" },
      {
        path: at('calls/raw-without-name'),
        reason: expect.stringMatching(/no extension\); a headerless recording needs its extension/),
      },
    ]);
  });
});
