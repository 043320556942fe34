// The account's own security: its password, its second factor (TOTP: scan a QR code, confirm with a
// code, keep the recovery codes), and ending every session at once. Owner and users alike.
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, errorText } from '../api';
import { endSession } from '../session';
import { PasswordField, ScreenTitle, Status } from '../ui';

type Outcome = { message?: string; error?: string };

function ChangePassword() {
  const [password, setPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [status, setStatus] = useState<Outcome>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      // The answer's X-Auth-Token (kept by call) continues this session; every other one ends.
      await call('/control/v2/auth/password', { method: 'POST', body: { password, newPassword } });
      setPassword('');
      setNewPassword('');
      setStatus({ message: 'Password changed. Every other session has ended.' });
    } catch (e) {
      setStatus({ error: e instanceof ApiFailure && e.status === 403 ? 'The current password is not right.' : errorText(e) });
    }
  };
  return (
    <section class="panel security-part" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit}>
        <PasswordField label="Current password" name="password" autocomplete="current-password" value={password} onValue={setPassword} />
        <PasswordField label="New password" name="newPassword" autocomplete="new-password" value={newPassword} onValue={setNewPassword} />
        <button type="submit">Change the password</button>
      </form>
      <Status {...status} />
    </section>
  );
}

interface Enrolment {
  secret: string;
  uri: string;
  qrCode: string;
}

/** The server's SVG shown from a blob: address (the console's CSP allows no data: or inline images). */
function QrCode({ svg }: { svg: string }) {
  const [src, setSrc] = useState<string>();
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
    setSrc(url);
    return () => URL.revokeObjectURL(url);
  }, [svg]);
  return src ? <img src={src} alt="QR code for your authenticator app" width={240} height={240} /> : null;
}

function TwoFactor() {
  const [state, setState] = useState<{ enabled: boolean; recoveryCodesLeft: number }>();
  const [enrolment, setEnrolment] = useState<Enrolment>();
  const [recoveryCodes, setRecoveryCodes] = useState<string[]>();
  const [code, setCode] = useState('');
  const [status, setStatus] = useState<Outcome>({});
  const load = () =>
    call<{ enabled: boolean; recoveryCodesLeft: number }>('/api/v2.6/auth/totp').then(setState, (e: unknown) =>
      setStatus({ error: errorText(e) }),
    );
  useEffect(() => void load(), []);
  const act = async (work: () => Promise<void>) => {
    setStatus({});
    try {
      await work();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  const enrol = () => act(async () => setEnrolment(await call<Enrolment>('/api/v2.6/auth/totp/enrol', { method: 'POST' })));
  const confirm = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const { recoveryCodes } = await call<{ recoveryCodes: string[] }>('/api/v2.6/auth/totp/confirm', { method: 'POST', body: { code } });
      setRecoveryCodes(recoveryCodes);
      setEnrolment(undefined);
      setCode('');
      await load();
    });
  };
  const disable = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      await call('/api/v2.6/auth/totp/disable', { method: 'POST', body: { code } });
      setCode('');
      setRecoveryCodes(undefined);
      setStatus({ message: 'Two-factor authentication is off.' });
      await load();
    });
  };
  const codeField = (
    <label>
      Code from your authenticator app
      <input
        name="code"
        autocomplete="one-time-code"
        inputMode="numeric"
        required
        value={code}
        onInput={(e) => setCode(e.currentTarget.value.trim())}
      />
    </label>
  );

  return (
    <section class="panel security-part" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor authentication</h2>
      {!state ? null : state.enabled ? (
        <>
          <p>On. Logging in takes a code from your authenticator app. {state.recoveryCodesLeft} recovery codes are left.</p>
          {recoveryCodes ? (
            <div class="recovery">
              <p>
                <strong>Keep these recovery codes somewhere safe.</strong> Each one logs you in once without the app. They are not shown
                again.
              </p>
              <ul aria-label="Recovery codes">
                {recoveryCodes.map((c) => (
                  <li key={c}>
                    <code>{c}</code>
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          <form onSubmit={disable}>
            {codeField}
            <button type="submit" class="secondary">
              Turn off
            </button>
          </form>
        </>
      ) : enrolment ? (
        <>
          <p>Scan this code with an authenticator app (or type the key), then enter the code it shows.</p>
          <QrCode svg={enrolment.qrCode} />
          <p>
            Key: <code data-testid="totp-secret">{enrolment.secret}</code>
          </p>
          <form onSubmit={confirm}>
            {codeField}
            <button type="submit">Turn on</button>
          </form>
        </>
      ) : (
        <>
          <p>Off. With it on, logging in takes your password and a code from an app on your phone.</p>
          <button type="button" onClick={enrol}>
            Set up two-factor authentication
          </button>
        </>
      )}
      <Status {...status} />
    </section>
  );
}

function Sessions() {
  const [status, setStatus] = useState<Outcome>({});
  const logOutEverywhere = async () => {
    try {
      await call('/api/v2.6/auth/logout-everywhere', { method: 'POST' });
      endSession();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  return (
    <section class="panel security-part" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p>Lost a device, or logged in somewhere you should not have? End every session of your account, this one too.</p>
      <button type="button" class="secondary" onClick={logOutEverywhere}>
        Log out everywhere
      </button>
      <Status {...status} />
    </section>
  );
}

export function Security() {
  return (
    <>
      <ScreenTitle id="security-title">Security</ScreenTitle>
      <ChangePassword />
      <TwoFactor />
      <Sessions />
    </>
  );
}
