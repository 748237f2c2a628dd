// The account's password: forgotten (a mailed link), reset from that link, changed while
// signed in; signing out everywhere; and the page for paths the dashboard does not have.

import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorText, Field, Link, LocalError, prevented, Section, useApp, useSubmit } from '../ui.js';
import { AskForLink, ChoosePassword, NewPassword } from './emailed-link.js';

export function Forgot() {
  const { t } = useApp();
  return (
    <AskForLink
      endpoint="/password-reset"
      title="forgot.title"
      intro="forgot.intro"
      email="login.email"
      sent="forgot.sent"
      submit="forgot.submit"
      aside={<Link href="/login">{t('nav.login')}</Link>}
    />
  );
}

export function Reset() {
  return (
    <ChoosePassword
      endpoint="/password-reset/confirm"
      title="reset.title"
      submit="reset.submit"
      again={{ href: '/forgot', label: 'reset.again' }}
    />
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
        <NewPassword
          submit={submit}
          id="new_password"
          value={next}
          set={setNext}
          confirm={confirm}
          setConfirm={setConfirm}
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
