// Sign up (email), the page the emailed link opens (choose a password), and log in.
// Forms send what was typed and word the API's refusal next to its field: the rules live in
// one place, the API.

import { useState } from 'preact/hooks';
import { api, type SessionT } from '../api.js';
import { ErrorText, Field, Link, LocalError, prevented, useApp, useSubmit } from '../ui.js';

export function Signup() {
  const { t } = useApp();
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const submit = useSubmit(async () => {
    await api.post('/register', { email });
    setSentTo(email.trim());
  });
  return (
    <section class="card narrow">
      <h1>{t('signup.title')}</h1>
      {sentTo ? (
        <p class="success" role="status">
          {t('signup.sent', { email: sentTo })}
        </p>
      ) : (
        <form noValidate onSubmit={prevented(() => submit.run())}>
          <Field
            label={t('signup.email')}
            id="email"
            type="email"
            autocomplete="email"
            value={email}
            onInput={submit.edit(setEmail)}
            error={submit.at('email')}
          />
          <ErrorText error={submit.rest('email')} />
          <button type="submit" disabled={submit.busy}>
            {t('signup.submit')}
          </button>
        </form>
      )}
      <p class="aside">
        {t('signup.haveAccount')} <Link href="/login">{t('nav.login')}</Link>
      </p>
    </section>
  );
}

export function Verify() {
  const { t, query, signedIn } = useApp();
  const token = query.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const submit = useSubmit(async () => {
    if (password !== confirm) throw new LocalError('confirm', 'err.mismatch');
    const s = await api.post<SessionT>('/verify', { token, password });
    signedIn(s.token, '/overview');
  });
  return (
    <section class="card narrow">
      <h1>{t('verify.title')}</h1>
      {!token ? (
        <p class="error" role="alert">
          {t('err.notoken')}
        </p>
      ) : (
        <form noValidate onSubmit={prevented(() => submit.run())}>
          <Field
            label={t('verify.password')}
            id="password"
            type="password"
            autocomplete="new-password"
            hint={t('verify.hint')}
            value={password}
            onInput={submit.edit(setPassword)}
            error={submit.at('password')}
          />
          <Field
            label={t('verify.confirm')}
            id="confirm"
            type="password"
            autocomplete="new-password"
            value={confirm}
            onInput={submit.edit(setConfirm)}
            error={submit.at('confirm')}
          />
          <ErrorText error={submit.rest('password', 'confirm')} />
          <button type="submit" disabled={submit.busy}>
            {t('verify.submit')}
          </button>
        </form>
      )}
    </section>
  );
}

export function Login() {
  const { t, query, signedIn } = useApp();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = useSubmit(async () => {
    const s = await api.post<SessionT>('/login', { email, password });
    signedIn(s.token, query.get('next') ?? undefined);
  });
  return (
    <section class="card narrow">
      <h1>{t('login.title')}</h1>
      <form noValidate onSubmit={prevented(() => submit.run())}>
        <Field
          label={t('login.email')}
          id="email"
          type="email"
          autocomplete="email"
          value={email}
          onInput={submit.edit(setEmail)}
          error={submit.at('email')}
        />
        <Field
          label={t('login.password')}
          id="password"
          type="password"
          autocomplete="current-password"
          value={password}
          onInput={submit.edit(setPassword)}
          error={submit.at('password')}
        />
        <ErrorText error={submit.rest('email', 'password')} />
        <button type="submit" disabled={submit.busy}>
          {t('login.submit')}
        </button>
      </form>
      <p class="aside">
        <Link href="/forgot">{t('forgot.link')}</Link>
      </p>
      <p class="aside">
        {t('login.noAccount')} <Link href="/signup">{t('nav.signup')}</Link>
      </p>
    </section>
  );
}
