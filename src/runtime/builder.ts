// controller-runtime's builder: a controller `for` one kind (its own changes enqueue it, its
// deletion cancels its work), the other objects it `watches` with how they map to its keys, then
// `complete` with the reconcile. Each controller declares its wiring this way in its setup file.
import {
  type ChangeFilter,
  type Controller,
  type ControllerOptions,
  cancelOnDelete,
  enqueueOnChange,
  type KeyMapper,
  ownKey,
  type ReconcileResult,
  runController,
  splitKey,
} from './controller.ts';
import type { Informer, KubeObject } from './informer.ts';

type Wire = (controller: Controller) => void;

export class ControllerBuilder {
  private readonly wires: Wire[] = [];
  private readonly options: Omit<ControllerOptions, 'reconcile'>;

  constructor(options: Omit<ControllerOptions, 'reconcile'>) {
    this.options = options;
  }

  /** The kind reconciled: changes that pass `filter` enqueue the object's own key. */
  for<T extends KubeObject>(informer: Informer<T>, filter?: ChangeFilter<T>): this {
    this.wires.push((c) => {
      enqueueOnChange(informer, c, ownKey, filter);
      cancelOnDelete(informer, c);
    });
    return this;
  }

  /** Another kind whose changes enqueue the keys `mapper` gives. */
  watches<T extends KubeObject>(informer: Informer<T>, mapper: KeyMapper<T>, filter?: ChangeFilter<T>): this {
    this.wires.push((c) => enqueueOnChange(informer, c, mapper, filter));
    return this;
  }

  /** Starts the workers with `reconcile(namespace, name, signal)` and wires every watch to them. */
  complete(
    reconcile: (namespace: string, name: string, signal: AbortSignal) => Promise<ReconcileResult>,
  ): Controller {
    const controller = runController({
      ...this.options,
      reconcile: (key, signal) => {
        const { namespace, name } = splitKey(key);
        return reconcile(namespace ?? '', name, signal);
      },
    });
    for (const wire of this.wires) wire(controller);
    return controller;
  }
}
