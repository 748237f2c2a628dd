// The two ends of an emailed link, for the sign-up and for a forgotten password alike: the form
// that asks for one, and the page it opens to choose a password. The two flows differ only in
// their endpoints and the words around the forms.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type SessionT } from '../api.js';
import type { MessageKey } from '../i18n.js';
import { ErrorText, Field, Link, LocalError, prevented, useApp, useSubmit } from '../ui.js';

export function AskForLink(props: {
  endpoint: '/register' | '/password-reset';
  title: MessageKey;
  intro?: MessageKey;
  email: MessageKey;
  sent: MessageKey;
  submit: MessageKey;
  /** The line under the card: where else the user may want to go. */
  aside: ComponentChildren;
}) {
  const { t } = useApp();
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const submit = useSubmit(async () => {
    await api.post(props.endpoint, { email });
    setSentTo(email.trim());
  });
  return (
    <section class="card narrow">
      <h1>{t(props.title)}</h1>
      {sentTo ? (
        <p class="success" role="status">
          {t(props.sent, { email: sentTo })}
        </p>
      ) : (
        <form noValidate onSubmit={prevented(() => submit.run())}>
          {props.intro && <p class="muted">{t(props.intro)}</p>}
          <Field
            label={t(props.email)}
            id="email"
            type="email"
            autocomplete="email"
            value={email}
            onInput={submit.edit(setEmail)}
            error={submit.at('email')}
          />
          <ErrorText error={submit.rest('email')} />
          <button type="submit" disabled={submit.busy}>
            {t(props.submit)}
          </button>
        </form>
      )}
      <p class="aside">{props.aside}</p>
    </section>
  );
}

export function ChoosePassword(props: {
  endpoint: '/verify' | '/password-reset/confirm';
  title: MessageKey;
  submit: MessageKey;
  /** Where a refused link sends the user for a new one, if anywhere. */
  again?: { href: string; label: MessageKey };
}) {
  const { t, query, signedIn } = useApp();
  const token = query.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const submit = useSubmit(async () => {
    if (password !== confirm) throw new LocalError('confirm', 'err.mismatch');
    const s = await api.post<SessionT>(props.endpoint, { token, password });
    signedIn(s.token, '/overview');
  });
  return (
    <section class="card narrow">
      <h1>{t(props.title)}</h1>
      {!token ? (
        <p class="error" role="alert">
          {t('err.notoken')}
        </p>
      ) : (
        <form noValidate onSubmit={prevented(() => submit.run())}>
          <NewPassword
            submit={submit}
            id="password"
            value={password}
            set={setPassword}
            confirm={confirm}
            setConfirm={setConfirm}
          />
          <ErrorText error={submit.rest('password', 'confirm')} />
          <button type="submit" disabled={submit.busy}>
            {t(props.submit)}
          </button>
        </form>
      )}
      {props.again && submit.error !== null && (
        <p class="aside">
          <Link href={props.again.href}>{t(props.again.label)}</Link>
        </p>
      )}
    </section>
  );
}

/** A new password and its repetition; `id` is the field the API names when it refuses the password. */
export function NewPassword(props: {
  submit: ReturnType<typeof useSubmit>;
  id: string;
  value: string;
  set: (v: string) => void;
  confirm: string;
  setConfirm: (v: string) => void;
}) {
  const { t } = useApp();
  const { submit } = props;
  return (
    <>
      <Field
        label={t('verify.password')}
        id={props.id}
        type="password"
        autocomplete="new-password"
        hint={t('verify.hint')}
        value={props.value}
        onInput={submit.edit(props.set)}
        error={submit.at(props.id)}
      />
      <Field
        label={t('verify.confirm')}
        id="confirm"
        type="password"
        autocomplete="new-password"
        value={props.confirm}
        onInput={submit.edit(props.setConfirm)}
        error={submit.at('confirm')}
      />
    </>
  );
}
