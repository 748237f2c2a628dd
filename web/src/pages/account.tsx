// The account's password: forgotten (a mailed link), reset from that link, changed while
// signed in; signing out everywhere; and the page for paths the dashboard does not have.

import { useState } from 'preact/hooks';
import { api, type SessionT } from '../api.js';
import { ErrorText, Field, Link, LocalError, prevented, Section, useApp, useSubmit } from '../ui.js';

export function Forgot() {
  const { t } = useApp();
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const submit = useSubmit(async () => {
    await api.post('/password-reset', { email });
    setSentTo(email.trim());
  });
  return (
    <section class="card narrow">
      <h1>{t('forgot.title')}</h1>
      {sentTo ? (
        <p class="success" role="status">
          {t('forgot.sent', { email: sentTo })}
        </p>
      ) : (
        <form noValidate onSubmit={prevented(() => submit.run())}>
          <p class="muted">{t('forgot.intro')}</p>
          <Field
            label={t('login.email')}
            id="email"
            type="email"
            autocomplete="email"
            value={email}
            onInput={submit.edit(setEmail)}
            error={submit.at('email')}
          />
          <ErrorText error={submit.rest('email')} />
          <button type="submit" disabled={submit.busy}>
            {t('forgot.submit')}
          </button>
        </form>
      )}
      <p class="aside">
        <Link href="/login">{t('nav.login')}</Link>
      </p>
    </section>
  );
}

export function Reset() {
  const { t, query, signedIn } = useApp();
  const token = query.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const submit = useSubmit(async () => {
    if (password !== confirm) throw new LocalError('confirm', 'err.mismatch');
    const s = await api.post<SessionT>('/password-reset/confirm', { token, password });
    signedIn(s.token, '/overview');
  });
  return (
    <section class="card narrow">
      <h1>{t('reset.title')}</h1>
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
            {t('reset.submit')}
          </button>
        </form>
      )}
      {submit.error !== null && (
        <p class="aside">
          <Link href="/forgot">{t('reset.again')}</Link>
        </p>
      )}
    </section>
  );
}

function ChangePassword() {
  const { t } = useApp();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [done, setDone] = useState(false);
  const submit = useSubmit(async () => {
    setDone(false);
    if (next !== confirm) throw new LocalError('confirm', 'err.mismatch');
    await api.post('/password', { current_password: current, new_password: next });
    setCurrent('');
    setNext('');
    setConfirm('');
    setDone(true);
  });
  return (
    <Section title={t('account.change')}>
      <form noValidate onSubmit={prevented(() => submit.run())}>
        <Field
          label={t('account.current')}
          id="current_password"
          type="password"
          autocomplete="current-password"
          value={current}
          onInput={submit.edit(setCurrent)}
          error={submit.at('current_password')}
        />
        <Field
          label={t('verify.password')}
          id="new_password"
          type="password"
          autocomplete="new-password"
          hint={t('verify.hint')}
          value={next}
          onInput={submit.edit(setNext)}
          error={submit.at('new_password')}
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
        <ErrorText error={submit.rest('current_password', 'new_password', 'confirm')} />
        {done && (
          <p class="success" role="status">
            {t('account.changed')}
          </p>
        )}
        <button type="submit" disabled={submit.busy}>
          {t('account.changeSubmit')}
        </button>
      </form>
    </Section>
  );
}

function Everywhere() {
  const { t, logout } = useApp();
  const submit = useSubmit(async () => {
    await api.post('/logout-all');
    logout();
  });
  return (
    <Section title={t('account.everywhere')}>
      <p class="muted">{t('account.everywhereHint')}</p>
      <ErrorText error={submit.error} />
      <button type="button" class="secondary" disabled={submit.busy} onClick={() => submit.run()}>
        {t('account.everywhereSubmit')}
      </button>
    </Section>
  );
}

export function Account() {
  const { t } = useApp();
  return (
    <>
      <Section title={t('account.title')} wide page>
        <p class="muted">{t('account.intro')}</p>
      </Section>
      <ChangePassword />
      <Everywhere />
    </>
  );
}

export function NotFound() {
  const { t, loggedIn } = useApp();
  return (
    <section class="card narrow">
      <h1>{t('notfound.title')}</h1>
      <p>{t('notfound.body')}</p>
      <Link class="button" href={loggedIn ? '/overview' : '/'}>
        {t('notfound.home')}
      </Link>
    </section>
  );
}
