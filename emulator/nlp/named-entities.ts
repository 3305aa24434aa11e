/**
 * `/nlp/v1/ne` (spec 01, "Named entity extraction"), an emulation in the recorded shape (golden:
 * `begin_pos`, `end_pos` one past the last character, `form`, `std_form`, `class`, `extended_class`
 * (`""` when none), `source` `basic`), from a small gazetteer and number patterns, so that the
 * pipeline's redaction runs its real path in tests and the demo:
 *
 * - persons (`PSN`, `Person`): common surnames, with a given name when one follows;
 * - places (`LOC`): prefectures (`Province`), cities and wards (`City`), towns (`GPE`), a few countries
 *   and regions (`Country`, `Domestic_Region`); a prefecture, city and town said one after another, or a
 *   town with its block numbers (`一丁目`, `二番地`), are one `Address`;
 * - numbers: phone numbers written in digits or kanji digits, 10–11 of them from a 0 (`NUM`,
 *   `Phone_Number`); dates (`DAT`, `Date`), times (`TIM`, `Time`), amounts (`MNY`, `Money`), ages
 *   (`NUM`, `Age`);
 * - organizations (`ORG`): a few call-center words.
 *
 * Digits spelled in kana are not entities here, as a real extractor may well miss them: the pipeline's
 * own patterns must find those. Overlapping matches keep the longest; results come in text order.
 */

export interface NamedEntity {
  begin_pos: number;
  end_pos: number;
  form: string;
  std_form: string;
  class: string;
  extended_class: string;
  source: string;
}

const SURNAMES = [
  '佐藤',
  '鈴木',
  '高橋',
  '田中',
  '伊藤',
  '渡辺',
  '山本',
  '中村',
  '小林',
  '加藤',
  '吉田',
  '山田',
  '佐々木',
  '山口',
  '松本',
  '井上',
  '木村',
  '清水',
  '山崎',
  '森田',
];
const GIVEN_NAMES = [
  '太郎',
  '花子',
  '一郎',
  '健太',
  '翔太',
  '美咲',
  '陽子',
  '恵子',
  '大輔',
  '直樹',
  '由美',
  '誠',
];
const PREFECTURES = [
  '北海道',
  '東京都',
  '大阪府',
  '京都府',
  '神奈川県',
  '埼玉県',
  '千葉県',
  '愛知県',
  '兵庫県',
  '福岡県',
  '静岡県',
  '広島県',
  '宮城県',
  '沖縄県',
];
const CITIES = [
  '渋谷区',
  '新宿区',
  '港区',
  '千代田区',
  '中央区',
  '世田谷区',
  '品川区',
  '横浜市',
  '川崎市',
  '大阪市',
  '名古屋市',
  '札幌市',
  '福岡市',
  '京都市',
  '神戸市',
  'さいたま市',
  '仙台市',
  '広島市',
];
const TOWNS = ['神南', '代々木', '丸の内', '梅田', '栄', '天神', '道玄坂', '青葉台'];
const COUNTRIES: [string, string][] = [
  ['日本', 'Country'],
  ['アメリカ', 'Country'],
  ['関東', 'Domestic_Region'],
  ['九州', 'Domestic_Region'],
];
const ORGANIZATIONS = ['カスタマーセンター', 'サポート窓口'];

const KANJI_NUMBER = '[〇零一二三四五六七八九十百千万0-9０-９]+';
const KANJI_DIGIT = '[〇零一二三四五六七八九0-9０-９]';

/** A phone number: 10–11 digits from a 0, in groups joined by nothing, hyphens, `の` or spaces. */
const PHONE = new RegExp(`${KANJI_DIGIT}(?:[-－ー\\s]|の)?(?:${KANJI_DIGIT}(?:[-－ー\\s]|の)?){8,11}`, 'gu');
const DATE = new RegExp(
  `(?:(?:明治|大正|昭和|平成|令和)(?:元|${KANJI_NUMBER})年|${KANJI_NUMBER}年)?${KANJI_NUMBER}月${KANJI_NUMBER}日|(?:明治|大正|昭和|平成|令和)(?:元|${KANJI_NUMBER})年`,
  'gu',
);
const TIME = new RegExp(`(?:午前|午後)?${KANJI_NUMBER}時(?:半|${KANJI_NUMBER}分)?`, 'gu');
const MONEY = new RegExp(`${KANJI_NUMBER}(?:,[0-9]{3})*円`, 'gu');
const AGE = new RegExp(`${KANJI_NUMBER}歳`, 'gu');
const BLOCK = new RegExp(
  `${KANJI_NUMBER}丁目(?:${KANJI_NUMBER}番地?(?:${KANJI_NUMBER}号)?)?|${KANJI_NUMBER}番地(?:の${KANJI_NUMBER})?`,
  'gu',
);

interface Match {
  begin: number;
  end: number;
  cls: string;
  extended: string;
}

function digitCount(text: string): number {
  return [...text].filter((c) => /[〇零一二三四五六七八九0-9０-９]/u.test(c)).length;
}

function words(text: string, list: readonly string[], cls: string, extended: string): Match[] {
  const out: Match[] = [];
  for (const word of list) {
    for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + word.length)) {
      out.push({ begin: at, end: at + word.length, cls, extended });
    }
  }
  return out;
}

function regex(text: string, re: RegExp, cls: string, extended: string, keep = (_: string) => true): Match[] {
  return [...text.matchAll(re)]
    .filter((m) => keep(m[0]))
    .map((m) => ({
      begin: m.index,
      end: m.index + m[0].length,
      cls,
      extended,
    }));
}

function persons(text: string): Match[] {
  return words(text, SURNAMES, 'PSN', 'Person').map((m) => {
    const given = GIVEN_NAMES.find((g) => text.startsWith(g, m.end));
    return given ? { ...m, end: m.end + given.length } : m;
  });
}

/** Place names next to each other (and a town's block numbers) as one address. */
function places(text: string): Match[] {
  const parts = [
    ...words(text, PREFECTURES, 'LOC', 'Province'),
    ...words(text, CITIES, 'LOC', 'City'),
    ...words(text, TOWNS, 'LOC', 'GPE'),
  ].sort((a, b) => a.begin - b.begin);
  const out: Match[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (last && part.begin === last.end)
      out[out.length - 1] = { ...last, end: part.end, extended: 'Address' };
    else out.push({ ...part });
  }
  for (const m of out) {
    const block = new RegExp(`^(?:${BLOCK.source})`, 'u').exec(text.slice(m.end));
    if (block && m.extended !== 'Province') {
      m.end += block[0].length;
      m.extended = 'Address';
    }
  }
  return out;
}

export function extractNamedEntities(sentence: string): NamedEntity[] {
  const candidates = [
    ...persons(sentence),
    ...places(sentence),
    ...COUNTRIES.flatMap(([w, ext]) => words(sentence, [w], 'LOC', ext)),
    ...words(sentence, ORGANIZATIONS, 'ORG', 'Organization'),
    ...regex(sentence, PHONE, 'NUM', 'Phone_Number', (m) => {
      const n = digitCount(m);
      return /^[〇零0０]/u.test(m) && n >= 10 && n <= 11;
    }),
    ...regex(sentence, DATE, 'DAT', 'Date'),
    ...regex(sentence, TIME, 'TIM', 'Time'),
    ...regex(sentence, MONEY, 'MNY', 'Money'),
    ...regex(sentence, AGE, 'NUM', 'Age'),
  ];
  // Longest first, then earliest; a match overlapping one already taken is dropped.
  candidates.sort((a, b) => b.end - b.begin - (a.end - a.begin) || a.begin - b.begin);
  const taken: Match[] = [];
  for (const c of candidates) {
    // A phone number's trailing separator is not part of it.
    while (c.end > c.begin && /[-－ー\sの]/u.test(sentence[c.end - 1]!) && c.extended === 'Phone_Number')
      c.end--;
    if (!taken.some((t) => c.begin < t.end && t.begin < c.end)) taken.push(c);
  }
  return taken
    .sort((a, b) => a.begin - b.begin)
    .map((m) => {
      const form = sentence.slice(m.begin, m.end);
      return {
        begin_pos: m.begin,
        end_pos: m.end,
        form,
        std_form: form,
        class: m.cls,
        extended_class: m.extended,
        source: 'basic',
      };
    });
}
