// spec.gitWriteBack: where each published version is committed in Git. Every rule is checked by zod
// and by the API server (CEL) with the same message, so a bad repository URL, path or template is
// refused at `kubectl apply`, not found at the first publish.
import { z } from 'zod';
import { matching, objectName, withCel } from './validation.ts';

const F = 'spec.gitWriteBack';

/** The placeholders a commit message template may use, as Flux's image automation spells them. */
export const COMMIT_MESSAGE_PLACEHOLDERS = ['Site', 'OldVersion', 'NewVersion', 'Release'] as const;
export type CommitMessagePlaceholder = (typeof COMMIT_MESSAGE_PLACEHOLDERS)[number];

export const DEFAULT_COMMIT_MESSAGE_TEMPLATE =
  'Publish {{.NewVersion}} of {{.Site}}\n\nStaticExportRelease {{.Release}} published it (previously {{.OldVersion}}).';
// A reserved domain (RFC 2606): an address no one can own. A users.noreply.github.com address
// would credit the commits to whoever registers that login on GitHub.
export const DEFAULT_GIT_AUTHOR = {
  name: 'static-export-operator',
  email: 'static-export-operator@noreply.invalid',
} as const;
export const DEFAULT_GIT_FIELD = 'staticExport.version';

const NAMES = COMMIT_MESSAGE_PLACEHOLDERS.join('|');
/** A placeholder in a template: `{{.Name}}`, spaces allowed inside the braces. */
export const PLACEHOLDER = String.raw`\{\{\s*\.(${NAMES})\s*\}\}`;
// A template: every '{{' opens a placeholder. One match over the text, as the API server's cost
// budget allows (a rule looking at each '{{…}}' apart costs more than twice the budget).
const TEMPLATE_PATTERN = String.raw`^([^{]|\{[^{]|${PLACEHOLDER})*\{?$`;

/** Git's scp-like SSH form `user@host:path` (src/git/ssh-url.ts reads it). */
export const SCP_LIKE_PATTERN = String.raw`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s?#]+$`;
const URL_MESSAGE = `${F}.url must be the repository's https:// URL such as https://github.com/acme/gitops.git (http:// only where the operator allows it) or its SSH URL such as ssh://git@github.com/acme/gitops.git or git@github.com:acme/gitops.git`;
const SSH_PASSWORD_MESSAGE = `${F}.url must not hold a password (ssh://user:password@): the SSH key goes in the Secret named by ${F}.secretRef (keys identity and known_hosts)`;
// An ssh:// URL's userinfo with a ':' (a password).
const SSH_PASSWORD = '^[sS][sS][hH]://[^/?#@]*:[^/?#@]*@';
const USERINFO_MESSAGE = `${F}.url must not hold credentials (user:token@): credentials go in the Secret named by ${F}.secretRef (keys username and password)`;
const URL_QUERY_MESSAGE = `${F}.url must not have a query or fragment (?… or #…): name the repository only`;
const URL_CHARS_MESSAGE = `${F}.url must not contain spaces, control characters or backslashes: write the repository's https:// URL as its server shows it`;
// URL parsers drop tabs and line breaks and read a backslash as a slash (`https:\\u:t@h`, with
// backslashes, is https://u:t@h to them): none of those may stand in the text the rules below read.
const URL_CHARS = String.raw`[\x00-\x20\x7f\\]`;
// Userinfo of an http(s) URL: the part before '@' in the authority (RE2 and JavaScript read this
// alike; an ssh URL's user is refused by the scheme rule alone).
const USERINFO = '^[hH][tT][tT][pP][sS]?://[^/?#]*@';

const repositoryUrl = withCel(
  z
    .string()
    .max(2048)
    .refine(
      (v) =>
        new RegExp(SCP_LIKE_PATTERN).test(v) ||
        (URL.canParse(v) && /^(https?|ssh):$/.test(new URL(v).protocol) && new URL(v).hostname !== ''),
      URL_MESSAGE,
    )
    .refine(
      (v) =>
        !new RegExp(USERINFO).test(v) &&
        !(
          URL.canParse(v) &&
          /^https?:$/.test(new URL(v).protocol) &&
          (new URL(v).username || new URL(v).password)
        ),
      USERINFO_MESSAGE,
    )
    .refine((v) => !new RegExp(SSH_PASSWORD).test(v), SSH_PASSWORD_MESSAGE)
    .refine((v) => !/[?#]/.test(v), URL_QUERY_MESSAGE)
    .refine((v) => !new RegExp(URL_CHARS).test(v), URL_CHARS_MESSAGE),
  [
    {
      rule: `self.matches(r'${SCP_LIKE_PATTERN}') || (isURL(self) && url(self).getScheme() in ['http', 'https', 'ssh'] && url(self).getHostname() != '')`,
      message: URL_MESSAGE,
    },
    { rule: `!self.matches(r'${USERINFO}')`, message: USERINFO_MESSAGE },
    { rule: `!self.matches(r'${SSH_PASSWORD}')`, message: SSH_PASSWORD_MESSAGE },
    { rule: `!self.matches(r'[?#]')`, message: URL_QUERY_MESSAGE },
    { rule: `!self.matches(r'${URL_CHARS}')`, message: URL_CHARS_MESSAGE },
  ],
);

// git check-ref-format --branch: segments that start with a letter, digit or '_' (so none starts
// with '.' or '-'), of characters git allows (no space, control character, ~ ^ : ? * [ \\ or @),
// joined by single slashes; besides, no '..', no segment ending in .lock, no '.' at the end, not
// HEAD, and not a full ref name (refs/heads/main would become refs/heads/refs/heads/main).
const BRANCH_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$';
const LOCK_SEGMENT = String.raw`\.lock(/|$)`;
const branchName = (field: string) => {
  const message = `${field} must be a branch name such as main or env/production, as git check-ref-format takes it: letters, digits, '.', '_', '-' and '/'; no '..', no part ending in .lock, not ending in '.', not HEAD, and the branch alone (main, not refs/heads/main)`;
  return withCel(
    z
      .string()
      .max(255)
      .refine(
        (v) =>
          new RegExp(BRANCH_PATTERN).test(v) &&
          !v.includes('..') &&
          !new RegExp(LOCK_SEGMENT).test(v) &&
          !v.endsWith('.') &&
          v !== 'HEAD' &&
          !v.startsWith('refs/'),
        message,
      ),
    [
      {
        rule: `self.matches(r'${BRANCH_PATTERN}') && !self.contains('..') && !self.matches(r'${LOCK_SEGMENT}') && !self.endsWith('.') && self != 'HEAD' && !self.startsWith('refs/')`,
        message,
      },
    ],
  );
};

const PATH_PATTERN = String.raw`^[^/]+(/[^/]+)*\.ya?ml$`;
// What git's verify_path refuses, in every spelling a file system may read as '.git': any case,
// NTFS's trailing dots and spaces, its short name git~1 and its streams (`.git::$DATA`).
const PATH_DOT_SEGMENT = String.raw`(^|/)(\.|\.\.|(\.[gG][iI][tT]|[gG][iI][tT]~1)[. ]*(:[^/]*)?)(/|$)`;
// Control characters and backslashes (a separator on Windows), and the code points HFS+ ignores in
// a name (zero-width joiners, direction marks, the BOM): `.g\u200cit` is .git there.
const HFS_IGNORED: [number, number][] = [
  [0x200c, 0x200f],
  [0x202a, 0x202e],
  [0x206a, 0x206f],
  [0xfeff, 0xfeff],
];
const hex = (c: number) => c.toString(16).padStart(4, '0');
const PATH_CHARS_RE2 = `[\\x00-\\x1f\\x7f\\\\${HFS_IGNORED.map(([a, b]) => `\\x{${hex(a)}}-\\x{${hex(b)}}`).join('')}]`;
const PATH_CHARS_JS = new RegExp(
  `[\\x00-\\x1f\\x7f\\\\${HFS_IGNORED.map(([a, b]) => `\\u${hex(a)}-\\u${hex(b)}`).join('')}]`,
);
const PATH_MESSAGE = `${F}.path must be a YAML file relative to the repository root, such as clusters/production/docs-values.yaml or apps/docs/.argocd-source-docs.yaml (no leading '/'; no '.', '..' or .git segments in any spelling, such as .GIT, .git. or git~1; no backslashes, control or invisible characters; ending in .yaml or .yml)`;

/** Whether `path` is a file git writes where write-back may edit it (spec.gitWriteBack.path's rule). */
export function isRepositoryPath(path: string): boolean {
  return (
    new RegExp(PATH_PATTERN).test(path) &&
    !new RegExp(PATH_DOT_SEGMENT).test(path) &&
    !PATH_CHARS_JS.test(path)
  );
}

const repositoryPath = withCel(z.string().max(1024).refine(isRepositoryPath, PATH_MESSAGE), [
  {
    rule: `self.matches(r'${PATH_PATTERN}') && !self.matches(r'${PATH_DOT_SEGMENT}') && !self.matches(r'${PATH_CHARS_RE2}')`,
    message: PATH_MESSAGE,
  },
]);

const FIELD_PATTERN = '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$';

// The CRD is also a Helm template of the operator chart: its texts name the placeholders without
// the double braces, which Helm would evaluate.
const PLACEHOLDER_LIST = `${COMMIT_MESSAGE_PLACEHOLDERS.slice(0, -1)
  .map((p) => `.${p}`)
  .join(', ')} and .${COMMIT_MESSAGE_PLACEHOLDERS.at(-1)}`;
const TEMPLATE_MESSAGE = `${F}.messageTemplate may only use the placeholders ${PLACEHOLDER_LIST}, each between double curly braces as in Flux's commit templates; double curly braces hold nothing else`;
const AUTHOR_NAME_MESSAGE = `${F}.author.name must not contain '<', '>', a line break or another control character`;
// C0 and DEL: git fsck --strict refuses a commit whose header or message holds NUL.
const AUTHOR_NAME_FORBIDDEN = String.raw`[<>\x00-\x1f\x7f]`;
// A message keeps its line breaks and tabs.
const TEMPLATE_CONTROL = String.raw`[\x00-\x08\x0b-\x1f\x7f]`;
const TEMPLATE_CONTROL_MESSAGE = `${F}.messageTemplate must not contain control characters other than line breaks and tabs (git refuses a commit holding NUL)`;
const messageTemplate = withCel(
  z
    .string()
    .min(1, `${F}.messageTemplate must not be empty: leave it out for the default message`)
    .max(1024)
    .refine((v) => new RegExp(TEMPLATE_PATTERN).test(v), TEMPLATE_MESSAGE)
    .refine((v) => !new RegExp(TEMPLATE_CONTROL).test(v), TEMPLATE_CONTROL_MESSAGE),
  [
    { rule: `self.matches(r'${TEMPLATE_PATTERN}')`, message: TEMPLATE_MESSAGE },
    { rule: `!self.matches(r'${TEMPLATE_CONTROL}')`, message: TEMPLATE_CONTROL_MESSAGE },
  ],
);

const PUSH_BRANCH_MESSAGE = `${F}.pushBranch must differ from ${F}.branch: leave it out to push to ${F}.branch itself`;

export const gitWriteBackSchema = withCel(
  z
    .object({
      url: repositoryUrl.describe(
        `URL of the Git repository to commit to: https://host/owner/repository.git, or over SSH ssh://git@host[:port]/owner/repository.git or git@host:owner/repository.git (shown and compared as ssh://git@host/owner/repository). It must be on the operator's --allowed-git-urls list (plain http:// also needs --allow-insecure-git-url).`,
      ),
      branch: branchName(`${F}.branch`)
        .optional()
        .describe("Branch to commit to; absent: the repository's default branch."),
      pushBranch: branchName(`${F}.pushBranch`)
        .optional()
        .describe(
          'Push the commits here instead of to branch, for review (created from branch when missing); merge it to promote. Must differ from branch.',
        ),
      path: repositoryPath.describe(
        "The YAML file to write: a values file (field is set in it, everything else kept byte for byte) or Argo CD's .argocd-source-<application>.yaml override file (helm.parameters; created when missing).",
      ),
      field: matching(
        FIELD_PATTERN,
        `${F}.field must be a dotted YAML path such as staticExport.version (letters, digits, '_' and '-' between the dots)`,
        253,
      )
        .default(DEFAULT_GIT_FIELD)
        .describe('The YAML path the version is written to (in an override file: the Helm parameter name).'),
      secretRef: z
        .object({
          name: objectName(`${F}.secretRef.name`).describe(
            'Name of a Secret in the namespace of the StaticExportRelease.',
          ),
        })
        .optional()
        .describe(
          "Secret with the credentials, in Flux's GitRepository format: for https:// keys username and password (a token) and optionally ca.crt (a private CA); for SSH keys identity (the private key; password: its passphrase) and known_hosts (required: host keys are always verified). Other keys are refused. Absent: anonymous over HTTPS (a server that takes pushes without credentials).",
        ),
      signingKey: z
        .object({
          secretRef: z
            .object({
              name: objectName(`${F}.signingKey.secretRef.name`).describe(
                'Name of a Secret in the namespace of the StaticExportRelease.',
              ),
            })
            .describe(
              'Secret with the SSH private key as key identity (ed25519 or RSA; password: its passphrase).',
            ),
        })
        .optional()
        .describe(
          "Sign each commit with an SSH key (a gpgsig SSH signature, as git -c gpg.format=ssh commit -S makes), for branches that require signed commits; named as Flux's ImageUpdateAutomation names its signing key. OpenPGP keys (Flux's git.asc) are not supported.",
        ),
      author: z
        .object({
          name: withCel(
            z
              .string()
              .min(1, `${F}.author.name must not be empty`)
              .max(256)
              .refine((v) => !new RegExp(AUTHOR_NAME_FORBIDDEN).test(v), AUTHOR_NAME_MESSAGE),
            [{ rule: `!self.matches(r'${AUTHOR_NAME_FORBIDDEN}')`, message: AUTHOR_NAME_MESSAGE }],
          )
            .default(DEFAULT_GIT_AUTHOR.name)
            .describe('Author and committer name of the commits.'),
          email: matching(
            String.raw`^[^\s<>@\x00-\x1f\x7f]+@[^\s<>@\x00-\x1f\x7f]+$`,
            `${F}.author.email must be an e-mail address such as docs-bot@example.com (no spaces, angle brackets or control characters)`,
            254,
          )
            .default(DEFAULT_GIT_AUTHOR.email)
            .describe('Author and committer e-mail of the commits.'),
        })
        .default({ ...DEFAULT_GIT_AUTHOR })
        .describe('Who the commits are by.'),
      messageTemplate: messageTemplate
        .optional()
        .describe(
          `Commit message: the placeholders ${PLACEHOLDER_LIST}, each between double curly braces, are replaced by the site (domain, project or repository), the version served before ("none" for the first), the version published and the release (namespace/name). Absent: a message naming the new version, the site, the release and the version before.`,
        ),
    })
    .refine((g) => g.pushBranch === undefined || g.pushBranch !== g.branch, {
      message: PUSH_BRANCH_MESSAGE,
      path: ['pushBranch'],
    })
    .describe(
      'Commit each published version (never the link) to a file in a Git repository, so Git shows what the site serves and environments promote by merging. The commit is made after the target was written; the site keeps serving when it fails (condition GitWriteBack).',
    ),
  [
    {
      rule: '!has(self.pushBranch) || !has(self.branch) || self.pushBranch != self.branch',
      message: PUSH_BRANCH_MESSAGE,
    },
  ],
);
