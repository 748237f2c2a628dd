// Outgoing mail: SMTP through nodemailer when SMTP_URL is set. Without it the message is
// logged instead, so that someone running the gateway locally can still follow the link.

import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** What a reader of the log needs when no SMTP server is configured. */
  link: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** Settles when every message handed to send() so far has been delivered or has failed. */
  idle(): Promise<void>;
}

export function createMailer(config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>, log: Logger): Mailer {
  // nodemailer (some forty modules) is loaded with the first mail, not by every process at start.
  let transport: Promise<Transporter> | undefined;
  const inflight = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    inflight.add(p);
    const done = () => void inflight.delete(p);
    p.then(done, done);
    return p;
  };
  return {
    send(mail) {
      if (!config.SMTP_URL) {
        log.info(
          { to: mail.to, subject: mail.subject, link: mail.link },
          'mail not sent (no SMTP_URL configured); follow the link to continue',
        );
        return Promise.resolve();
      }
      const url = config.SMTP_URL;
      transport ??= import('nodemailer').then((m) => m.default.createTransport(url));
      return track(
        transport
          .then((t) => t.sendMail({ from: config.MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text }))
          .then(() => {
            log.debug({ subject: mail.subject }, 'mail sent');
          }),
      );
    },
    async idle() {
      await Promise.allSettled([...inflight]);
    },
  };
}

export function verificationMail(to: string, link: string): Mail {
  return {
    to,
    link,
    subject: 'Confirm your airouter account',
    text: [
      'Hello,',
      '',
      'Someone (hopefully you) asked to create an airouter account with this address.',
      'To confirm it and choose your password, open this link within 24 hours:',
      '',
      link,
      '',
      'If you did not ask for this, ignore this message: no account is opened without it.',
    ].join('\n'),
  };
}

export function alreadyRegisteredMail(to: string, link: string, resetLink: string): Mail {
  return {
    to,
    link,
    subject: 'You already have an airouter account',
    text: [
      'Hello,',
      '',
      'Someone (hopefully you) asked to create an airouter account with this address,',
      'but it already has one. Nothing was changed. You can sign in here:',
      '',
      link,
      '',
      'Forgot the password? Ask for a reset link here:',
      '',
      resetLink,
      '',
      'If you did not ask for this, you can ignore this message.',
    ].join('\n'),
  };
}

export function resetMail(to: string, link: string, ttlMin: number): Mail {
  return {
    to,
    link,
    subject: 'Reset your airouter password',
    text: [
      'Hello,',
      '',
      'Someone (hopefully you) asked to reset the password of the airouter account with this address.',
      `To choose a new password, open this link within ${ttlMin} minutes (it works once):`,
      '',
      link,
      '',
      'Choosing a new password signs out every session of the account.',
      'If you did not ask for this, ignore this message: the password stays as it is.',
    ].join('\n'),
  };
}
