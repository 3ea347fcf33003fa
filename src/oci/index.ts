// OCI images of site versions and the registry client: used by `static-export mirror` to push,
// save and load, and by whatever follows a registry inside an air gap.
export {
  credentialsFromAuthFiles,
  type FoundCredentials,
  parseChallenge,
  type RegistryCredentials,
} from './auth.ts';
export { type BlobSource, bufferSource, type Descriptor, digestOf, MEDIA_TYPES } from './content.ts';
export {
  isOciError,
  isSignatureError,
  OciError,
  type OciErrorReason,
  SignatureError,
  type SignatureErrorReason,
} from './errors.ts';
export {
  ANNOTATIONS,
  type PushedImage,
  type PushImageOptions,
  pushImage,
  readSiteAnnotations,
  type SiteImage,
  type SiteMetadata,
  siteAnnotations,
  siteImage,
  VERSION_TAG,
  versionTag,
} from './image.ts';
export { type SiteLayer, siteLayer } from './layer.ts';
export { type LayoutImage, REF_NAME, readLayoutArchive, saveLayoutArchive } from './layout.ts';
export {
  decidePublish,
  type PackagedSite,
  type PublishDecision,
  type PublishOptions,
  type PublishResult,
  packageSite,
  pruneVersions,
  publishSite,
  tagsToMove,
  type VersionInfo,
  versionsToPrune,
} from './publish.ts';
export {
  formatOciReference,
  isDigest,
  isLoopbackRegistry,
  isTag,
  OCI_REFERENCE_HELP,
  type OciReference,
  parseOciReference,
} from './reference.ts';
export { RegistryClient, type RegistryClientOptions, type UploadOutcome } from './registry.ts';
export {
  COSIGN,
  type Signed,
  signatureTag,
  signingKey,
  signManifest,
  simpleSigningPayload,
  type Verified,
  verificationKey,
  verifyManifest,
} from './sign.ts';
