// The API's refusals in the user's language: one message per error code and per field rule of
// src/dashboard/error-codes.ts. The records are typed by that vocabulary, so a code added there
// without its words here fails the type check; test/web/i18n.test.ts checks both languages.

import type { ErrorCode, FieldReason } from '../../src/dashboard/error-codes.js';
import type { Lang } from './i18n.js';

type Words = { codes: Record<ErrorCode, string>; reasons: Record<FieldReason, string> };

const en: Words = {
  codes: {
    invalid_json: 'The page sent something the server could not read. Reload the page and try again.',
    invalid_text: 'Remove the unusual characters (control characters or broken symbols) and try again.',
    invalid_request: 'Some of what was entered is not valid.',
    invalid_range: 'That period is not valid.',
    invalid_cursor: 'This list has changed; go back to its first page.',
    invalid_token: 'This link is not valid. Ask for a new one.',
    token_used: 'This link has already been used. Log in, or ask for a new link.',
    token_expired: 'This link has expired. Ask for a new one.',
    amount_out_of_range: 'Enter an amount from {min} to {max}.',
    unauthorized: 'Please log in first.',
    invalid_session: 'Your session has ended. Please log in again.',
    invalid_credentials: 'Wrong email or password.',
    wrong_password: 'The current password is not right.',
    forbidden: 'You are not allowed to do this.',
    not_found: 'This was not found, or it is not yours.',
    method_disabled: 'This payment method is not available right now.',
    already_verified: 'This account is already set up. Log in with its password.',
    too_many_keys: 'You have as many keys as an account may hold. Revoke one first.',
    invalid_code: 'This code is not valid. Check it and try again.',
    code_used: 'This code has already been redeemed.',
    code_expired: 'This code has expired.',
    request_too_large: 'That is too much text to send at once.',
    too_many_attempts: 'Too many attempts. Try again in {retry} seconds.',
    too_many_open_deposits: 'You have too many unpaid top-ups open. Pay or let one expire first.',
    no_free_amount: 'Too many payments are open near this amount. Try a slightly different amount.',
    insufficient_balance: 'Your balance is too low for this. Top up first.',
    provider_error: 'The payment provider did not answer. Nothing was charged; try again shortly.',
    refused: 'This was refused.',
    unavailable: 'The service is briefly unavailable. Try again in a moment.',
    model_unavailable: 'This model is unavailable right now. Choose another model.',
    model_failed: 'The model did not answer. Nothing was charged; try again shortly.',
    timeout: 'The server took too long to answer. Try again.',
    internal_error: 'Something went wrong on the server. Try again.',
  },
  reasons: {
    required: 'This is required.',
    invalid_type: 'This value is not of the right kind.',
    too_short: 'Use at least {min} characters.',
    too_long: 'Use at most {max} characters.',
    invalid_email: 'Enter an email address, like name@example.com.',
    invalid_format: 'This is not in the expected form.',
    too_small: 'Enter at least {min}.',
    too_large: 'Enter at most {max}.',
    not_integer: 'Enter a whole number.',
    not_allowed: 'Choose one of: {allowed}.',
    control_characters: 'Remove the control characters (such as line breaks or tabs).',
    invalid_amount: 'Enter an amount above 0 with at most {decimals} decimals.',
    period_required: 'Choose a period for the spending cap.',
    period_without_cap: 'A period needs a spending cap amount.',
    invalid_date: 'Enter a valid date.',
    mixed_range: 'Choose either a period or dates, not both.',
    disordered_range: 'The start must not be after the end.',
    repeated: 'This was given more than once.',
    invalid_cursor: 'This list has changed; go back to its first page.',
  },
};

const id: Words = {
  codes: {
    invalid_json: 'Halaman mengirim data yang tidak terbaca oleh server. Muat ulang halaman lalu coba lagi.',
    invalid_text: 'Hapus karakter yang tidak lazim (karakter kontrol atau simbol rusak) lalu coba lagi.',
    invalid_request: 'Sebagian isian tidak valid.',
    invalid_range: 'Periode itu tidak valid.',
    invalid_cursor: 'Daftar ini telah berubah; kembali ke halaman pertamanya.',
    invalid_token: 'Tautan ini tidak valid. Minta tautan baru.',
    token_used: 'Tautan ini sudah dipakai. Masuk, atau minta tautan baru.',
    token_expired: 'Tautan ini sudah kedaluwarsa. Minta tautan baru.',
    amount_out_of_range: 'Masukkan jumlah dari {min} sampai {max}.',
    unauthorized: 'Silakan masuk terlebih dahulu.',
    invalid_session: 'Sesi Anda telah berakhir. Silakan masuk lagi.',
    invalid_credentials: 'Email atau kata sandi salah.',
    wrong_password: 'Kata sandi saat ini salah.',
    forbidden: 'Anda tidak diizinkan melakukan ini.',
    not_found: 'Tidak ditemukan, atau bukan milik Anda.',
    method_disabled: 'Metode pembayaran ini sedang tidak tersedia.',
    already_verified: 'Akun ini sudah siap. Masuk dengan kata sandinya.',
    too_many_keys: 'Jumlah kunci Anda sudah maksimal. Cabut satu terlebih dahulu.',
    invalid_code: 'Kode ini tidak valid. Periksa dan coba lagi.',
    code_used: 'Kode ini sudah pernah ditukarkan.',
    code_expired: 'Kode ini sudah kedaluwarsa.',
    request_too_large: 'Teks yang dikirim terlalu banyak sekaligus.',
    too_many_attempts: 'Terlalu banyak percobaan. Coba lagi dalam {retry} detik.',
    too_many_open_deposits: 'Terlalu banyak isi saldo yang belum dibayar. Bayar atau biarkan satu kedaluwarsa dulu.',
    no_free_amount: 'Terlalu banyak pembayaran terbuka di sekitar jumlah ini. Coba jumlah yang sedikit berbeda.',
    insufficient_balance: 'Saldo Anda tidak cukup untuk ini. Isi saldo terlebih dahulu.',
    provider_error: 'Penyedia pembayaran tidak menjawab. Tidak ada yang ditagih; coba lagi sebentar lagi.',
    refused: 'Ini ditolak.',
    unavailable: 'Layanan sedang tidak tersedia sebentar. Coba lagi sesaat lagi.',
    model_unavailable: 'Model ini sedang tidak tersedia. Pilih model lain.',
    model_failed: 'Model tidak menjawab. Tidak ada biaya; coba lagi sebentar lagi.',
    timeout: 'Server terlalu lama menjawab. Coba lagi.',
    internal_error: 'Terjadi kesalahan di server. Coba lagi.',
  },
  reasons: {
    required: 'Wajib diisi.',
    invalid_type: 'Jenis isian ini tidak sesuai.',
    too_short: 'Gunakan minimal {min} karakter.',
    too_long: 'Gunakan paling banyak {max} karakter.',
    invalid_email: 'Masukkan alamat email, misalnya nama@contoh.com.',
    invalid_format: 'Bentuk isian ini tidak sesuai.',
    too_small: 'Masukkan minimal {min}.',
    too_large: 'Masukkan paling banyak {max}.',
    not_integer: 'Masukkan bilangan bulat.',
    not_allowed: 'Pilih salah satu dari: {allowed}.',
    control_characters: 'Hapus karakter kontrol (seperti baris baru atau tab).',
    invalid_amount: 'Masukkan jumlah di atas 0 dengan paling banyak {decimals} desimal.',
    period_required: 'Pilih periode untuk batas pengeluaran.',
    period_without_cap: 'Periode memerlukan jumlah batas pengeluaran.',
    invalid_date: 'Masukkan tanggal yang valid.',
    mixed_range: 'Pilih periode atau tanggal, jangan keduanya.',
    disordered_range: 'Awal tidak boleh setelah akhir.',
    repeated: 'Ini diberikan lebih dari sekali.',
    invalid_cursor: 'Daftar ini telah berubah; kembali ke halaman pertamanya.',
  },
};

export const ERROR_WORDS: Record<Lang, Words> = { en, id };

/** The message for a refusal: the field's rule where the API names one, else its code's. */
export function errorWords(
  lang: Lang,
  code: string,
  reason: string | undefined,
  vars: Record<string, string>,
): string | undefined {
  const w = ERROR_WORDS[lang];
  // A range refusal says the range itself; a field's rule says more than invalid_request.
  const text = reason && code !== 'amount_out_of_range' ? w.reasons[reason as FieldReason] : w.codes[code as ErrorCode];
  return text?.replace(/\{(\w+)\}/g, (_, name: string) => vars[name] ?? '');
}
