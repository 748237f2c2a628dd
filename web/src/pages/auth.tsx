// Sign up (email), the page the emailed link opens (choose a password), and log in.
// Forms send what was typed and word the API's refusal next to its field: the rules live in
// one place, the API.

import { useState } from 'preact/hooks';
import { api, type SessionT } from '../api.js';
import { ErrorText, Field, Link, prevented, useApp, useSubmit } from '../ui.js';
import { AskForLink, ChoosePassword } from './emailed-link.js';

export function Signup() {
  const { t } = useApp();
  return (
    <AskForLink
      endpoint="/register"
      title="signup.title"
      email="signup.email"
      sent="signup.sent"
      submit="signup.submit"
      aside={
        <>
          {t('signup.haveAccount')} <Link href="/login">{t('nav.login')}</Link>
        </>
      }
    />
  );
}

export function Verify() {
  return <ChoosePassword endpoint="/verify" title="verify.title" submit="verify.submit" />;
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
