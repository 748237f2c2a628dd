// Sign up (email), the page the emailed link opens (choose a password), and log in.
// Forms send what was typed and show the API's answer: the rules live in one place, the API.

import { useState } from 'preact/hooks';
import { api, type Session } from '../api.js';
import { ErrorText, Field, Link, useApp, useSubmit } from '../ui.js';

const value = (e: Event) => (e.target as HTMLInputElement).value;

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
        <p class="success" role="status">{t('signup.sent', { email: sentTo })}</p>
      ) : (
        <form noValidate onSubmit={(e) => { e.preventDefault(); submit.run(); }}>
          <Field label={t('signup.email')} id="email" type="email" autocomplete="email" value={email} onInput={(e) => setEmail(value(e))} />
          <ErrorText error={submit.error} />
          <button type="submit" disabled={submit.busy}>{t('signup.submit')}</button>
        </form>
      )}
      <p class="aside">{t('signup.haveAccount')} <Link href="/login">{t('nav.login')}</Link></p>
    </section>
  );
}

export function Verify() {
  const { t, query, signedIn } = useApp();
  const token = query.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const submit = useSubmit(async () => {
    if (password !== confirm) throw new Error(t('err.mismatch'));
    const s = await api.post<Session>('/verify', { token, password });
    signedIn(s.token, '/overview');
  });
  return (
    <section class="card narrow">
      <h1>{t('verify.title')}</h1>
      {!token ? (
        <p class="error" role="alert">{t('err.notoken')}</p>
      ) : (
        <form noValidate onSubmit={(e) => { e.preventDefault(); submit.run(); }}>
          <Field label={t('verify.password')} id="password" type="password" autocomplete="new-password" hint={t('verify.hint')} value={password} onInput={(e) => setPassword(value(e))} />
          <Field label={t('verify.confirm')} id="confirm" type="password" autocomplete="new-password" value={confirm} onInput={(e) => setConfirm(value(e))} />
          <ErrorText error={submit.error} />
          <button type="submit" disabled={submit.busy}>{t('verify.submit')}</button>
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
    const s = await api.post<Session>('/login', { email, password });
    signedIn(s.token, query.get('next') ?? undefined);
  });
  return (
    <section class="card narrow">
      <h1>{t('login.title')}</h1>
      <form noValidate onSubmit={(e) => { e.preventDefault(); submit.run(); }}>
        <Field label={t('login.email')} id="email" type="email" autocomplete="email" value={email} onInput={(e) => setEmail(value(e))} />
        <Field label={t('login.password')} id="password" type="password" autocomplete="current-password" value={password} onInput={(e) => setPassword(value(e))} />
        <ErrorText error={submit.error} />
        <button type="submit" disabled={submit.busy}>{t('login.submit')}</button>
      </form>
      <p class="aside">{t('login.noAccount')} <Link href="/signup">{t('nav.signup')}</Link></p>
    </section>
  );
}
