// SPDX-License-Identifier: Apache-2.0
// A list of nodes linked through their own `prev` and `next` pointers, held
// by a pointer to its first node, with a `listed` flag on each node: the
// lists of chunks or segments with room that the record slab and the block
// carver keep per size class. Never allocates; not thread-safe (the owner's
// lock guards the list and its nodes).
#ifndef ANYDEV_SRC_SUPPORT_LINKED_LIST_H_
#define ANYDEV_SRC_SUPPORT_LINKED_LIST_H_

namespace anydev::core {

// Puts `node` (not listed) first in the list that `head` starts.
template <class Node>
void link_first(Node*& head, Node* node) noexcept {
  node->prev = nullptr;
  node->next = head;
  if (head != nullptr) head->prev = node;
  head = node;
  node->listed = true;
}

// Takes `node` (listed) out of the list that `head` starts.
template <class Node>
void unlink(Node*& head, Node* node) noexcept {
  if (node->prev != nullptr) node->prev->next = node->next;
  if (node->next != nullptr) node->next->prev = node->prev;
  if (head == node) head = node->next;
  node->prev = node->next = nullptr;
  node->listed = false;
}

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_LINKED_LIST_H_
