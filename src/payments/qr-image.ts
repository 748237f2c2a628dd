// The QR image handed to the dashboard next to the QRIS text: a PNG data URL.

import QRCode from 'qrcode';

export const qrPngDataUrl = (text: string): Promise<string> =>
  QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 4, scale: 6 });
