/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* An intrusive doubly linked list, as systemd's LIST_*: each item carries its links, named by
 * LIST_FIELDS(type, name) (name_next and name_prev, so that one item can be in several lists),
 * and the list is a pointer to its first item, NULL when empty. Unlinking is O(1) without a
 * walk, which is why those who finish items in any order want it. */
#define LIST_FIELDS(t, name) t *name##_next, *name##_prev

/* item first in head. */
#define LIST_PREPEND(name, head, item)                                                          \
        do {                                                                                    \
                __typeof__(*(head)) **_head = &(head), *_item = (item);                         \
                _item->name##_prev = NULL;                                                      \
                _item->name##_next = *_head;                                                    \
                if (_item->name##_next)                                                         \
                        _item->name##_next->name##_prev = _item;                                \
                *_head = _item;                                                                 \
        } while (0)

/* item, which is in head, out of it. */
#define LIST_REMOVE(name, head, item)                                                           \
        do {                                                                                    \
                __typeof__(*(head)) **_head = &(head), *_item = (item);                         \
                if (_item->name##_next)                                                         \
                        _item->name##_next->name##_prev = _item->name##_prev;                   \
                if (_item->name##_prev)                                                         \
                        _item->name##_prev->name##_next = _item->name##_next;                   \
                else                                                                            \
                        *_head = _item->name##_next;                                            \
                _item->name##_next = _item->name##_prev = NULL;                                 \
        } while (0)

#define LIST_FOREACH(name, i, head) for (__typeof__(*(head)) *i = (head); i; i = i->name##_next)
