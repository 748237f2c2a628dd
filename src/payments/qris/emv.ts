// QRIS payloads: EMVCo merchant-presented QR text, a run of TLV fields (2-digit id, 2-digit
// length, value) closed by a CRC-16/CCITT-FALSE in field 63. The merchant's static code is
// turned into a dynamic one with an amount by editing the parsed fields, never the raw text.

export interface TlvField {
  id: string;
  value: string;
}

export class QrisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QrisError';
  }
}

// TextEncoder rather than Buffer: the QRIS settings check the merchant's code with this file, and
// the web app's type check, which knows no Node, reads them (src/payments/provider-config.ts).
const UTF8 = new TextEncoder();

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor), 4 uppercase hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of UTF8.encode(text)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** The fields of one TLV level, in order. */
export function parseTlv(text: string): TlvField[] {
  const fields: TlvField[] = [];
  let at = 0;
  while (at < text.length) {
    const head = text.slice(at, at + 4);
    if (!/^\d{4}$/.test(head)) throw new QrisError(`malformed field header at character ${at}`);
    const id = head.slice(0, 2);
    const length = Number(head.slice(2));
    const value = text.slice(at + 4, at + 4 + length);
    if (value.length !== length) throw new QrisError(`field ${id} at character ${at} runs past the end`);
    fields.push({ id, value });
    at += 4 + length;
  }
  return fields;
}

const field = (f: TlvField) => {
  if (f.value.length > 99) throw new QrisError(`field ${f.id} is longer than 99 characters`);
  return f.id + String(f.value.length).padStart(2, '0') + f.value;
};

/** Serializes the fields (any CRC among them dropped) and appends a fresh CRC. */
export function withCrc(fields: TlvField[]): string {
  const body =
    fields
      .filter((f) => f.id !== '63')
      .map(field)
      .join('') + '6304';
  return body + crc16(body);
}

/** Parses a whole payload: printable ASCII, a payload format of 01, and a last field 63 holding the right CRC. */
export function parsePayload(text: string): TlvField[] {
  if (!/^[\x20-\x7e]+$/.test(text)) throw new QrisError('not printable ASCII text');
  const fields = parseTlv(text);
  if (fields[0]?.id !== '00' || fields[0].value !== '01')
    throw new QrisError('does not start with payload format 000201');
  const last = fields.at(-1)!;
  if (last.id !== '63' || !/^[0-9A-Fa-f]{4}$/.test(last.value))
    throw new QrisError('does not end with a CRC field (6304 and four hex digits)');
  const expected = crc16(text.slice(0, -4));
  if (last.value.toUpperCase() !== expected) throw new QrisError(`CRC is ${last.value}, the content gives ${expected}`);
  return fields;
}

export const fieldValue = (fields: TlvField[], id: string): string | undefined =>
  fields.find((f) => f.id === id)?.value;

/**
 * Checks that a configured payload is a merchant's static QRIS code that can carry an amount:
 * static point of initiation, rupiah, no amount of its own, at least one merchant account.
 */
export function checkStaticPayload(text: string): void {
  const fields = parsePayload(text);
  const initiation = fieldValue(fields, '01');
  if (initiation !== '11')
    throw new QrisError(
      `point of initiation (field 01) is ${JSON.stringify(initiation ?? null)}, a static code has 11`,
    );
  if (fieldValue(fields, '53') !== '360') throw new QrisError('currency (field 53) is not 360 (IDR)');
  if (fieldValue(fields, '54') !== undefined) throw new QrisError('it already carries an amount (field 54)');
  if (!fields.some((f) => Number(f.id) >= 26 && Number(f.id) <= 51))
    throw new QrisError('it names no merchant account (fields 26-51)');
}

/** The static code with point of initiation 12 and the amount in field 54, in id order. */
export function toDynamic(staticPayload: string, amountIdr: bigint): string {
  if (amountIdr <= 0n) throw new QrisError('the amount must be positive');
  const fields = parsePayload(staticPayload).filter((f) => f.id !== '63' && f.id !== '54');
  const out: TlvField[] = [];
  let placed = false;
  for (const f of fields) {
    if (!placed && Number(f.id) > 54) {
      out.push({ id: '54', value: amountIdr.toString() });
      placed = true;
    }
    out.push(f.id === '01' ? { id: '01', value: '12' } : f);
  }
  if (!placed) out.push({ id: '54', value: amountIdr.toString() });
  return withCrc(out);
}
