/**
 * `/nlp/v1/sentence_type` (spec 01, "Sentence type classification"): the modality and speech acts
 * (`dialog_act`, the spec's Enumerations) of a text, as recorded (`{modality, dialog_act}`; the sample
 * `近くのレストランはどこですか？` → `interrogative`, `[information-seeking]`). An emulation, deterministic:
 * cue phrases of call-center Japanese, as the lines of the shipped phrasebook use them (an opening
 * `お電話ありがとうございます` is a greeting, `申し訳ございません` an apology, `失礼いたします` a goodbye, a
 * sentence ending in `か` a question…). A text of several sentences (a speaker's turn) gets the acts of
 * all of them, in the spec's order; a text with none of the cues is `information-providing`.
 */
import { DIALOG_ACTS, type DialogAct } from '../../schemas/service-nlp.ts';

interface Cue {
  act: DialogAct;
  pattern: RegExp;
}

/** Cue phrases per speech act, tested on each sentence. */
const CUES: Cue[] = [
  {
    act: 'greeting',
    pattern:
      /お電話ありがとうございます|もしもし|こんにちは|おはようございます|お世話になっております|担当の.+(でございます|が承ります)/,
  },
  { act: 'thanking', pattern: /ありがとう|感謝|助かりました|お礼/ },
  {
    act: 'apology',
    pattern: /申し訳|すみません|失礼いたしました|ご迷惑をおかけ|ご不便をおかけ|ご不快な思い/,
  },
  {
    act: 'goodbye',
    pattern:
      /失礼いたします|失礼します|お世話になりました|ありがとうございました|今後ともよろしく|さようなら/,
  },
  {
    act: 'information-seeking',
    pattern: /[かカ][。？?]?$|[？?]$|でしょうか|ますか|ですか|どう(なって|すれば)|いくら/,
  },
  {
    act: 'directive',
    pattern: /ください|いただけますか|いただけますでしょうか|お願いします|お願いいたします|してほしい/,
  },
  {
    act: 'agreement',
    pattern:
      /^(はい|ええ)|かしこまりました|承知いたしました|わかりました|おっしゃる通り|ごもっとも|大丈夫です/,
  },
  {
    act: 'commissive',
    pattern:
      /(?<!失礼|お願い)(いた|致)します。?$|手配|お送りいたしました|ご連絡いたします|申し伝えます|改善いたします/,
  },
  { act: 'feedback', pattern: /なるほど|そうですか|そういうことだったんですね/ },
  { act: 'stalling', pattern: /^(えー|えーっと|あのー|うーん)[、,]?/ },
  { act: 'pausing', pattern: /少々お待ち|お待ちください|考えさせてください/ },
  { act: 'acceptThanking', pattern: /とんでもない|どういたしまして/ },
  { act: 'acceptApology', pattern: /仕方ないですね|今回は許します|気にしないで/ },
];

export interface SentenceTypeResult {
  modality: 'declarative' | 'interrogative' | 'imperative';
  dialog_act: string[];
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[。！？!?])/u)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function classifySentence(text: string): SentenceTypeResult {
  const parts = sentences(text);
  const acts = new Set<string>();
  for (const sentence of parts) {
    const found = CUES.filter((c) => c.pattern.test(sentence)).map((c) => c.act);
    for (const act of found.length > 0 ? found : ['information-providing']) acts.add(act);
  }
  if (acts.size === 0) acts.add('information-providing');
  const last = parts.at(-1) ?? text;
  const modality = /[か？?]。?$|でしょうか|ますか|ですか/.test(last)
    ? 'interrogative'
    : /ください。?$/.test(last)
      ? 'imperative'
      : 'declarative';
  return { modality, dialog_act: DIALOG_ACTS.filter((a) => acts.has(a)) };
}
