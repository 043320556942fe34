// The texts of the mails the product sends: a plain-text body and an HTML one, with links to the console.
import { escapeHtml as escape } from '@pds/http';
import type { MailMessage } from '@pds/queue';

function html(title: string, paragraphs: string[], link: { href: string; label: string }): string {
  return `<!doctype html><html><body style="font-family:sans-serif;max-width:36em">
<h1 style="font-size:1.2em">${escape(title)}</h1>
${paragraphs.map((p) => `<p>${escape(p)}</p>`).join('\n')}
<p><a href="${escape(link.href)}">${escape(link.label)}</a></p>
</body></html>`;
}

/** The reset link's mail; `link` opens the console's reset page (the token is in its fragment). */
export function passwordResetMail(input: { to: string; address: string; link: string }): MailMessage {
  const subject = `Reset the password of ${input.address}`;
  const lines = [
    `Someone (hopefully you) asked to reset the password of ${input.address}.`,
    'The link below lets you choose a new one. It works once, for 24 hours, and only until another reset is asked for.',
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  ];
  return {
    to: input.to,
    subject,
    text: `${lines.join('\n\n')}\n\n${input.link}\n`,
    html: html(subject, lines, { href: input.link, label: 'Choose a new password' }),
  };
}
