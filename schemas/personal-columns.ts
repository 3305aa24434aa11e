/**
 * Manifest columns that hold personal data: the common names recorders and CRMs export, and those a
 * deployment declares (`redaction.personalColumns`), each with its kind. Their values are masked in
 * every stored output as redacted text is (the unredacted copy keeps them), and kept only as keyed
 * digests (schemas/personal-digest.ts), so `callpipe find --customer` and `--phone` answer from
 * manifests too.
 */
import { DEFAULT_MASK_LABELS, type BuiltInKind } from './redaction.ts';
import { personalDigest } from './personal-digest.ts';

/** Column (lower case) → kind, for the names commonly used; the configuration adds to them. */
const DEFAULT_PERSONAL_COLUMNS: Readonly<Record<string, string>> = {
  caller_number: 'phone',
  caller_id: 'phone',
  calling_number: 'phone',
  ani: 'phone',
  phone: 'phone',
  phone_number: 'phone',
  tel: 'phone',
  mobile: 'phone',
  customer_phone: 'phone',
  customer_id: 'customer',
  customer_number: 'customer',
  customer_name: 'name',
  name: 'name',
  email: 'email',
  mail: 'email',
  customer_email: 'email',
};

/** The personal columns of a deployment: the common names and its own (which win), keyed in lower case. */
export function personalColumnsOf(declared: Readonly<Record<string, string>> = {}): Record<string, string> {
  const columns: Record<string, string> = { ...DEFAULT_PERSONAL_COLUMNS };
  for (const [column, kind] of Object.entries(declared)) columns[column.toLowerCase()] = kind;
  return columns;
}

export interface PersonalValue {
  /** The manifest column; absent for a value of the recording's key. */
  column?: string;
  kind: string;
  digest: string;
  /** `source`: a number or address in the recording's key; absent: a manifest column. */
  origin?: 'manifest' | 'source';
}

/** What a personal column's value becomes in stored outputs: its kind's mask, as in redacted text. */
function columnMask(kind: string): string {
  return DEFAULT_MASK_LABELS[kind as BuiltInKind] ?? `[${kind}]`;
}

/**
 * `metadata` with its personal columns masked, and the keyed digest of each of their values (none
 * without a key, or for an empty value). Other columns are kept as they are.
 */
export function maskPersonalMetadata(
  metadata: Readonly<Record<string, string>>,
  columns: Readonly<Record<string, string>>,
  key: Buffer | undefined,
): { metadata: Record<string, string>; personalValues: PersonalValue[] } {
  const masked: Record<string, string> = {};
  const personalValues: PersonalValue[] = [];
  for (const [column, value] of Object.entries(metadata)) {
    const kind = columns[column.toLowerCase()];
    if (!kind || value.trim() === '') {
      masked[column] = value;
      continue;
    }
    masked[column] = columnMask(kind);
    const digest = key ? personalDigest(key, kind, value) : undefined;
    if (digest) personalValues.push({ column, kind, digest });
  }
  return { metadata: masked, personalValues };
}
