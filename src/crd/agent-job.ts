import { z } from 'zod';
import {
  conditionsSchema,
  GROUP_VERSION,
  metadataSchema,
  observedGenerationSchema,
  pendingCallSchema,
  secretKeySelector,
  timestamp,
} from './common.ts';
import { apiBaseUrl, immutable } from './validation.ts';

export const AJ_KIND = 'AgentJob';
export const AJ_PLURAL = 'agentjobs';

export const agentJobSpecSchema = z
  .object({
    projectId: immutable(
      z.string().min(1).max(128).describe('Project identifier (API keys page of the dashboard).'),
      'spec.projectId',
      'create a new AgentJob for another project',
    ),
    prompt: immutable(
      z.string().min(1).max(100_000).describe('The instruction the agent carries out.'),
      'spec.prompt',
      'create a new AgentJob for a new instruction',
    ),
    credentialsSecretRef: secretKeySelector('spec.credentialsSecretRef'),
    apiBaseUrl: apiBaseUrl('spec.apiBaseUrl')
      .optional()
      .describe("Admin API base URL; the operator's default otherwise."),
  })
  .describe('The agent job to create (once) on the platform.');

const agentJobStatusSchema = z
  .object({
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema.optional(),
    creation: pendingCallSchema('Creating', 'create call').optional(),
    jobId: z
      .string()
      .optional()
      .describe("The agent job's id on the platform, recorded as soon as it exists."),
    state: z.string().optional().describe('active, completed, archived, failed (or a newer value).'),
    prLink: z.string().optional().describe('The pull request the agent opened, once it exists.'),
    model: z.string().optional().describe('The model the agent ran with.'),
    source: z
      .object({
        repository: z.string().optional().describe('The repository the agent edits (a GitHub URL).'),
        ref: z.string().optional().describe('The branch or ref it works on.'),
      })
      .optional()
      .describe('Where the agent edits the docs.'),
    createdAt: timestamp().optional().describe('When the platform created the job.'),
    archivedAt: timestamp().optional().describe('When the platform archived the job.'),
    lastHandledReconcileAt: z
      .string()
      .optional()
      .describe(
        "The last value of the reconcile.fluxcd.io/requestedAt annotation handled (the job was polled then): Flux's convention.",
      ),
  })
  .meta({ default: {} })
  .describe('What the operator observed; written only by the operator.');

const agentJobSchema = z.object({
  apiVersion: z.literal(GROUP_VERSION),
  kind: z.literal(AJ_KIND),
  metadata: metadataSchema,
  spec: agentJobSpecSchema,
  status: agentJobStatusSchema.optional(),
});

export type AgentJobStatus = z.output<typeof agentJobStatusSchema>;
export type AgentJob = z.output<typeof agentJobSchema>;

export const agentJobCrd = {
  kind: AJ_KIND,
  plural: AJ_PLURAL,
  singular: 'agentjob',
  description:
    "Asks the docs platform's agent to make a change (spec.prompt) and reports the pull request it opens. Created on the platform at most once.",
  shortNames: ['aj'],
  spec: agentJobSpecSchema,
  status: agentJobStatusSchema,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'State', type: 'string', jsonPath: '.status.state', priority: 1 },
    { name: 'PR', type: 'string', jsonPath: '.status.prLink', priority: 1 },
  ],
} as const;
