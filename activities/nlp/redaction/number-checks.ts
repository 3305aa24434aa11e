/**
 * What makes a string of digits a phone number, a card number or a My Number: the shapes of Japanese
 * telephone numbers (the numbering plan of the Ministry of Internal Affairs and Communications), the
 * Luhn check of payment cards (ISO/IEC 7812-1), and the check digit of the Individual Number (個人番号,
 * the My Number Act's ordinance, article 5).
 */

/** Luhn: doubling every second digit from the right, the sum is a multiple of 10. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Card numbers are 13 to 19 digits (ISO/IEC 7812), pass Luhn, and start with a payment network's major
 * industry identifier, 2 to 6 (Mastercard's 2-series, Amex, JCB and Diners 3, Visa 4, Mastercard 5,
 * Discover and UnionPay 6): a millisecond timestamp (`17…`) is not one however it sums.
 */
export function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhnValid(digits);
}

/**
 * The check digit of a 12-digit Individual Number: with P(n) the n-th digit counted from the right
 * (check digit excluded, n = 1…11) and Q(n) = n + 1 for n ≤ 6, n − 5 for n ≥ 7, the remainder r of
 * Σ P(n)·Q(n) by 11 gives 0 when r ≤ 1, else 11 − r.
 */
export function myNumberCheckDigit(first11: string): number {
  let sum = 0;
  for (let n = 1; n <= 11; n++) {
    const p = Number(first11[11 - n]);
    const q = n <= 6 ? n + 1 : n - 5;
    sum += p * q;
  }
  const r = sum % 11;
  return r <= 1 ? 0 : 11 - r;
}

export function isMyNumber(digits: string): boolean {
  return /^\d{12}$/.test(digits) && myNumberCheckDigit(digits.slice(0, 11)) === Number(digits[11]);
}

/**
 * Japanese telephone numbers, national form (a leading 0): mobile, PHS and IP phones 0[5-9]0 + 8
 * digits; toll-free 0120 + 6 and 0800 + 7; navigation dial 0570 + 6; landlines 0 + 9 digits (area code
 * and subscriber number together). After a `+`, `81…` is the international form of the same numbers.
 */
const PHONE_SHAPES: readonly RegExp[] = [
  /^0[5-9]0\d{8}$/,
  /^0120\d{6}$/,
  /^0800\d{7}$/,
  /^0570\d{6}$/,
  /^0[1-9]\d{8}$/,
];

export function isPhoneNumber(digits: string, international = false): boolean {
  if (international && !digits.startsWith('81')) return false;
  const national = international ? `0${digits.slice(2)}` : digits;
  return PHONE_SHAPES.some((shape) => shape.test(national));
}
