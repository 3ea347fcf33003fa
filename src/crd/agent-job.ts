import { z } from 'zod';
import {
  conditionsSchema,
  GROUP_VERSION,
  metadataSchema,
  pendingCallSchema,
  secretKeySelector,
  timestamp,
} from './common.ts';
import { httpUrl, immutable } from './validation.ts';

export const AJ_KIND = 'AgentJob';
export const AJ_PLURAL = 'agentjobs';

export const agentJobSpecSchema = z.object({
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
  apiBaseUrl: httpUrl('spec.apiBaseUrl')
    .optional()
    .describe("Admin API base URL; the operator's default otherwise."),
});

export const agentJobStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: conditionsSchema.optional(),
  creation: pendingCallSchema('Creating', 'create call').optional(),
  jobId: z.string().optional(),
  state: z.string().optional().describe('active, completed, archived, failed (or a newer value).'),
  prLink: z.string().optional(),
  model: z.string().optional(),
  source: z.object({ repository: z.string().optional(), ref: z.string().optional() }).optional(),
  createdAt: timestamp().optional(),
  archivedAt: timestamp().optional(),
});

export const agentJobSchema = z.object({
  apiVersion: z.literal(GROUP_VERSION),
  kind: z.literal(AJ_KIND),
  metadata: metadataSchema,
  spec: agentJobSpecSchema,
  status: agentJobStatusSchema.optional(),
});

export type AgentJobSpec = z.output<typeof agentJobSpecSchema>;
export type AgentJobStatus = z.output<typeof agentJobStatusSchema>;
export type AgentJob = z.output<typeof agentJobSchema>;

export const agentJobCrd = {
  kind: AJ_KIND,
  plural: AJ_PLURAL,
  singular: 'agentjob',
  shortNames: ['aj'],
  spec: agentJobSpecSchema,
  status: agentJobStatusSchema,
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'PR', type: 'string', jsonPath: '.status.prLink' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', priority: 1 },
  ],
} as const;
