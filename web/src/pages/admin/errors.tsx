// The admin API's refusals on the admin pages. The operator's own codes (a catalogue that does not
// compile, a provider id taken, no secret to seal keys with) carry the API's exact message: it
// names the JSON path or the variable to fix, which no general wording can. Other codes are the
// app's usual words.

import { ApiError } from '../../api.js';
import { ErrorText } from '../../ui.js';
import { useAdminT, type AdminKey } from './i18n.js';

const OWN: Record<string, AdminKey> = {
  invalid_catalogue: 'adminErr.invalid_catalogue',
  provider_exists: 'adminErr.provider_exists',
  model_exists: 'adminErr.model_exists',
  provider_key_secret_missing: 'adminErr.provider_key_secret_missing',
  provider_key_missing: 'adminErr.provider_key_missing',
};

export function AdminError({ error }: { error: unknown }) {
  const t = useAdminT();
  if (error instanceof ApiError && (OWN[error.code] || (error.code === 'invalid_request' && error.message))) {
    const key = OWN[error.code] ?? 'adminErr.invalid_request';
    return (
      <p class="error" role="alert">
        {t(key, { message: error.message })}
      </p>
    );
  }
  return <ErrorText error={error} />;
}
